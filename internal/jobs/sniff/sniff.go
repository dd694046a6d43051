// Package sniff decides a file's media type from its first bytes — its magic
// numbers — and never from its name or a declared Content-Type, which the
// sender chooses. It is what the jobs subsystem uses to refuse an upload whose
// bytes are not what a tool accepts, before any job exists.
//
// [Detect] checks the formats tools take first (PDF, PNG, JPEG, GIF, WebP,
// ZIP, TIFF, AVIF and HEIC, gzip, 7-Zip, MP3, MP4, WAV, FLAC, Ogg) by their
// signatures, then falls back to [net/http.DetectContentType] (the WHATWG
// algorithm) for the rest, such as HTML, XML, plain text and the other types
// it knows. What neither recognises is [OctetStream].
package sniff

import (
	"bytes"
	"mime"
	"net/http"
	"strings"
)

// HeadBytes is how many leading bytes [Detect] looks at; more are ignored.
// It is larger than DetectContentType's 512 so that a PDF header preceded by
// up to 1 KiB of junk is still found, as PDF readers find it.
const HeadBytes = 1024

// Media types Detect returns. Types found by DetectContentType are returned
// as it names them, without parameters ("text/plain", not
// "text/plain; charset=utf-8").
const (
	PDF         = "application/pdf"
	PNG         = "image/png"
	JPEG        = "image/jpeg"
	GIF         = "image/gif"
	WebP        = "image/webp"
	TIFF        = "image/tiff"
	AVIF        = "image/avif"
	HEIC        = "image/heic"
	ZIP         = "application/zip"
	Gzip        = "application/gzip"
	SevenZip    = "application/x-7z-compressed"
	MP3         = "audio/mpeg"
	MP4         = "video/mp4"
	WAV         = "audio/wav"
	FLAC        = "audio/flac"
	Ogg         = "application/ogg"
	Empty       = "application/x-empty"
	OctetStream = "application/octet-stream"
)

// signature is a magic number at a fixed offset.
type signature struct {
	offset int
	magic  string
	media  string
}

// signatures are checked in order; the first match wins. Only formats whose
// signature is unambiguous at a fixed offset are here; the ISO BMFF family
// (MP4, AVIF, HEIC) is told apart by its brand in isoBMFF.
var signatures = []signature{
	{0, "%PDF-", PDF},
	{0, "\x89PNG\r\n\x1a\n", PNG},
	{0, "\xff\xd8\xff", JPEG},
	{0, "GIF87a", GIF},
	{0, "GIF89a", GIF},
	{0, "PK\x03\x04", ZIP},
	{0, "PK\x05\x06", ZIP}, // an empty archive
	{0, "II*\x00", TIFF},
	{0, "MM\x00*", TIFF},
	{0, "\x1f\x8b\x08", Gzip},
	{0, "7z\xbc\xaf\x27\x1c", SevenZip},
	{0, "fLaC", FLAC},
	{0, "OggS\x00", Ogg},
	{0, "ID3", MP3},
}

// Detect returns the media type of a file whose first bytes are head (at
// most [HeadBytes] are examined), without parameters. It never fails: an
// unknown format is [OctetStream] and no bytes at all are [Empty].
func Detect(head []byte) string {
	if len(head) == 0 {
		return Empty
	}
	if len(head) > HeadBytes {
		head = head[:HeadBytes]
	}
	for _, s := range signatures {
		if len(head) >= s.offset+len(s.magic) && string(head[s.offset:s.offset+len(s.magic)]) == s.magic {
			return s.media
		}
	}
	if riff(head, "WEBP") && len(head) >= 16 && string(head[12:15]) == "VP8" {
		return WebP
	}
	if riff(head, "WAVE") {
		return WAV
	}
	if t := isoBMFF(head); t != "" {
		return t
	}
	// An MPEG audio frame without an ID3 tag: 11 sync bits, MPEG-1 or 2,
	// layer III.
	if len(head) >= 2 && head[0] == 0xff && head[1]&0xe0 == 0xe0 && head[1]&0x06 == 0x02 {
		return MP3
	}
	// A PDF header after some junk: readers accept one in the first KiB. It
	// is looked for only once no format has matched at offset 0, so a PNG
	// with "%PDF-" inside stays a PNG.
	if bytes.Contains(head, []byte("%PDF-")) {
		return PDF
	}
	return base(http.DetectContentType(head))
}

// riff reports whether head is a RIFF container of the given form type.
func riff(head []byte, form string) bool {
	return len(head) >= 12 && string(head[0:4]) == "RIFF" && string(head[8:12]) == form
}

// isoBMFF tells the ISO base media file formats apart by the major brand of
// their leading ftyp box: AVIF, HEIC, else MP4. It returns "" when head does
// not start with an ftyp box.
func isoBMFF(head []byte) string {
	if len(head) < 12 || string(head[4:8]) != "ftyp" {
		return ""
	}
	switch string(head[8:12]) {
	case "avif", "avis":
		return AVIF
	case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1":
		return HEIC
	}
	return MP4
}

// base returns a media type without its parameters, lower-cased.
func base(contentType string) string {
	t, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		t, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(t))
}

// Accepts reports whether media type t is in accept, whose entries are
// media types ("application/pdf"), type wildcards ("image/*") or "*/*".
// Parameters and case are ignored on both sides. An empty accept accepts
// nothing.
func Accepts(accept []string, t string) bool {
	t = base(t)
	major, _, _ := strings.Cut(t, "/")
	for _, a := range accept {
		a = base(a)
		switch {
		case a == "*/*", a == t:
			return true
		case strings.HasSuffix(a, "/*") && strings.TrimSuffix(a, "/*") == major:
			return true
		}
	}
	return false
}
