package sniff_test

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/jobs/sniff"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		head string
		want string
	}{
		{name: "pdf", head: "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", want: sniff.PDF},
		{name: "pdf after junk", head: "\xef\xbb\xbf\r\n%PDF-1.4\n", want: sniff.PDF},
		{name: "pdf too late", head: strings.Repeat(" ", sniff.HeadBytes) + "%PDF-1.4", want: "text/plain"},
		{name: "png", head: "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", want: sniff.PNG},
		{name: "png holding a pdf header", head: "\x89PNG\r\n\x1a\n%PDF-1.4", want: sniff.PNG},
		{name: "jpeg", head: "\xff\xd8\xff\xe0\x00\x10JFIF\x00", want: sniff.JPEG},
		{name: "gif87a", head: "GIF87a\x01\x00", want: sniff.GIF},
		{name: "gif89a", head: "GIF89a\x01\x00", want: sniff.GIF},
		{name: "webp", head: "RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00", want: sniff.WebP},
		{name: "webp lossless", head: "RIFF\x24\x00\x00\x00WEBPVP8L\x18\x00\x00\x00", want: sniff.WebP},
		{name: "wav", head: "RIFF\x24\x00\x00\x00WAVEfmt ", want: sniff.WAV},
		{name: "zip", head: "PK\x03\x04\x14\x00\x00\x00", want: sniff.ZIP},
		{name: "empty zip", head: "PK\x05\x06" + strings.Repeat("\x00", 18), want: sniff.ZIP},
		{name: "tiff little endian", head: "II*\x00\x08\x00\x00\x00", want: sniff.TIFF},
		{name: "tiff big endian", head: "MM\x00*\x00\x00\x00\x08", want: sniff.TIFF},
		{name: "avif", head: "\x00\x00\x00\x1cftypavif\x00\x00\x00\x00", want: sniff.AVIF},
		{name: "heic", head: "\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", want: sniff.HEIC},
		{name: "mp4", head: "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00", want: sniff.MP4},
		{name: "gzip", head: "\x1f\x8b\x08\x00\x00\x00\x00\x00", want: sniff.Gzip},
		{name: "7z", head: "7z\xbc\xaf\x27\x1c\x00\x04", want: sniff.SevenZip},
		{name: "flac", head: "fLaC\x00\x00\x00\x22", want: sniff.FLAC},
		{name: "ogg", head: "OggS\x00\x02\x00\x00", want: sniff.Ogg},
		{name: "mp3 with id3", head: "ID3\x04\x00\x00\x00\x00\x00\x00", want: sniff.MP3},
		{name: "mp3 frame", head: "\xff\xfb\x90\x64\x00", want: sniff.MP3},
		{name: "html", head: "<!DOCTYPE html><html><body>hi", want: "text/html"},
		{name: "plain text", head: "hello, world\n", want: "text/plain"},
		{name: "binary", head: "\x00\x01\x02\x03\x04\x05", want: sniff.OctetStream},
		{name: "empty", head: "", want: sniff.Empty},
		{name: "short", head: "%P", want: "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sniff.Detect([]byte(tt.head)); got != tt.want {
				t.Errorf("Detect = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAccepts(t *testing.T) {
	tests := []struct {
		name   string
		accept []string
		media  string
		want   bool
	}{
		{name: "exact", accept: []string{"application/pdf"}, media: sniff.PDF, want: true},
		{name: "other", accept: []string{"application/pdf"}, media: sniff.PNG},
		{name: "wildcard", accept: []string{"image/*"}, media: sniff.WebP, want: true},
		{name: "wildcard other major", accept: []string{"image/*"}, media: sniff.PDF},
		{name: "any", accept: []string{"*/*"}, media: sniff.OctetStream, want: true},
		{name: "case and parameters", accept: []string{"Text/Plain; charset=utf-8"}, media: "text/plain", want: true},
		{name: "empty accepts nothing", accept: nil, media: sniff.PDF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sniff.Accepts(tt.accept, tt.media); got != tt.want {
				t.Errorf("Accepts(%q, %q) = %v, want %v", tt.accept, tt.media, got, tt.want)
			}
		})
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte("%PDF-1.4"))
	f.Add([]byte("\x89PNG\r\n\x1a\n"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	f.Fuzz(func(t *testing.T, head []byte) {
		if got := sniff.Detect(head); got == "" || strings.Contains(got, ";") {
			t.Fatalf("Detect(%q) = %q", head, got)
		}
	})
}
