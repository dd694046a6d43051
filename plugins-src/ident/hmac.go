package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/hmacsig"
)

// hmacInput is the hmac service's parameters.
type hmacInput struct {
	Operation   string  `json:"operation" doc:"sign: the HMAC of the text; verify: whether mac is the HMAC of the text."`
	Text        string  `json:"text" maxLength:"130048" doc:"The message; its UTF-8 bytes are signed."`
	Key         string  `json:"key" maxLength:"1024" writeOnly:"true" doc:"The secret key: text (its UTF-8 bytes) or hex digits, as key_encoding says. An empty key is allowed, and protects nothing."`
	KeyEncoding *string `json:"key_encoding,omitempty" enum:"text,hex" default:"text" doc:"text: the key's UTF-8 bytes are the key. hex: the key is hex digits of either case (RFC test keys such as 0x0b0b...)."`
	Algorithm   string  `json:"algorithm" enum:"sha1,sha256,sha512" doc:"The hash under the HMAC (RFC 2104): SHA-1, SHA-256 or SHA-512."`
	Encoding    *string `json:"encoding,omitempty" enum:"hex,base64" default:"hex" doc:"How the MAC is written: lower-case hex (either case for verify) or standard base64 with padding."`
	MAC         string  `json:"mac" ops:"verify" maxLength:"256" doc:"The MAC to check, in the encoding given."`
}

// hmacOutput is its result.
type hmacOutput struct {
	MAC   string `json:"mac" ops:"sign" doc:"The HMAC, encoded."`
	Valid bool   `json:"valid" ops:"verify" doc:"Whether mac is the HMAC of the text under the key; compared in constant time."`
}

func computeHMAC(ctx *guest.Context, in hmacInput) (hmacOutput, error) {
	invalid := map[error]string{
		hmacsig.ErrOption:    "unknown algorithm or encoding",
		hmacsig.ErrMACLength: "mac has the wrong length for the algorithm",
	}
	key, err := hmacsig.Key(in.Key, hmacsig.Encoding(bundled.String(in.KeyEncoding, "text")))
	if err != nil {
		return hmacOutput{}, bundled.ToolError(err, invalid)
	}
	a, e := hmacsig.Algorithm(in.Algorithm), hmacsig.Encoding(bundled.String(in.Encoding, "hex"))
	switch in.Operation {
	case "sign":
		mac, err := hmacsig.Sign(in.Text, key, a, e)
		return hmacOutput{MAC: mac}, bundled.ToolError(err, invalid)
	case "verify":
		ok, err := hmacsig.Verify(in.Text, key, a, in.MAC, e)
		return hmacOutput{Valid: ok}, bundled.ToolError(err, invalid)
	}
	return hmacOutput{}, guest.Failed("unknown operation")
}
