package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/jwtinfo"
)

// jwtInput is the jwt service's parameters.
type jwtInput struct {
	Operation      string  `json:"operation" doc:"decode: the header and claims, nothing verified. verify: decode and check an HS256 signature with the secret."`
	Token          string  `json:"token" maxLength:"16384" doc:"A signed JWT in the compact form: three base64url parts separated by '.'."`
	Secret         string  `json:"secret" ops:"verify" maxLength:"1024" writeOnly:"true" doc:"The HS256 secret, in secret_encoding."`
	SecretEncoding *string `json:"secret_encoding,omitempty" ops:"verify" enum:"text,hex,base64url" default:"text" doc:"text: the secret's UTF-8 bytes. hex: hex digits. base64url: unpadded base64url, as a JWK's k."`
}

// jwtOutput is its result.
type jwtOutput struct {
	Header    string `json:"header" doc:"The header's JSON text, as the token carries it."`
	Claims    string `json:"claims" doc:"The claims set's JSON text, as the token carries it."`
	Algorithm string `json:"algorithm" doc:"The header's alg."`
	Type      string `json:"type,omitempty" doc:"The header's typ, when it is a string."`
	IssuedAt  string `json:"issued_at,omitempty" doc:"The iat claim in RFC 3339 at Z, when it is a NumericDate."`
	ExpiresAt string `json:"expires_at,omitempty" doc:"The exp claim in RFC 3339 at Z, when it is a NumericDate. Not compared with any clock."`
	NotBefore string `json:"not_before,omitempty" doc:"The nbf claim in RFC 3339 at Z, when it is a NumericDate. Not compared with any clock."`
	Valid     bool   `json:"valid" ops:"verify" doc:"Whether the HS256 signature matches the secret (compared in constant time)."`
	Notice    string `json:"notice" doc:"What the result does and does not establish."`
}

const (
	noticeDecoded  = "Decoded only: the signature was not checked, so nothing in the header or the claims can be trusted."
	noticeValid    = "The HS256 signature matches the secret. The time claims (exp, nbf) were not compared with any clock: check them against the current time yourself."
	noticeNotValid = "The signature does not match the secret: nothing in the header or the claims can be trusted."
)

func computeJWT(ctx *guest.Context, in jwtInput) (jwtOutput, error) {
	invalid := map[error]string{
		jwtinfo.ErrAlgorithm: "the token's header does not name HS256: this tool verifies HS256 only (and alg none is never valid)",
		jwtinfo.ErrEncoding:  "unknown secret encoding",
	}
	t, err := jwtinfo.Decode(in.Token)
	if err != nil {
		return jwtOutput{}, bundled.ToolError(err, invalid)
	}
	out := jwtOutput{Header: t.Header, Claims: t.Claims, Algorithm: t.Algorithm, Type: t.Type,
		IssuedAt: t.IssuedAt, ExpiresAt: t.ExpiresAt, NotBefore: t.NotBefore, Notice: noticeDecoded}
	switch in.Operation {
	case "decode":
		return out, nil
	case "verify":
		secret, err := jwtinfo.Secret(in.Secret, bundled.String(in.SecretEncoding, "text"))
		if err != nil {
			return jwtOutput{}, bundled.ToolError(err, invalid)
		}
		ok, err := jwtinfo.VerifyHS256(t, secret)
		if err != nil {
			return jwtOutput{}, bundled.ToolError(err, invalid)
		}
		out.Valid, out.Notice = ok, noticeNotValid
		if ok {
			out.Notice = noticeValid
		}
		return out, nil
	}
	return jwtOutput{}, guest.Failed("unknown operation")
}
