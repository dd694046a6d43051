package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/digest"
)

// hashInput is the hash service's parameters.
type hashInput struct {
	Operation string  `json:"operation" doc:"digest: hash the text's UTF-8 bytes."`
	Text      string  `json:"text" maxLength:"130048" doc:"The text to hash; its UTF-8 bytes are hashed."`
	Algorithm string  `json:"algorithm" enum:"md5,sha1,sha256,sha512" doc:"The hash function. MD5 and SHA-1 only match existing checksums: they protect nothing."`
	Encoding  *string `json:"encoding,omitempty" enum:"hex,base64" default:"hex" doc:"How the digest is written: lower-case hex, or standard base64 with padding."`
	HMACKey   *string `json:"hmac_key,omitempty" maxLength:"1024" doc:"When present, the digest is an HMAC keyed with the key's UTF-8 bytes (an empty key included)."`
}

// hashOutput is its result.
type hashOutput struct {
	Digest string `json:"digest" doc:"The digest (or HMAC), encoded."`
}

func computeHash(ctx *guest.Context, in hashInput) (hashOutput, error) {
	o := digest.Options{
		Algorithm: digest.Algorithm(in.Algorithm),
		Encoding:  digest.Encoding(bundled.String(in.Encoding, "hex")),
	}
	if in.HMACKey != nil {
		o.HMAC, o.Key = true, *in.HMACKey
	}
	sum, err := digest.Sum(in.Text, o)
	return hashOutput{Digest: sum}, bundled.ToolError(err, map[error]string{
		digest.ErrAlgorithm: "unknown algorithm",
		digest.ErrEncoding:  "unknown encoding",
	})
}
