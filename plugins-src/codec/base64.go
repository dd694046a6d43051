package main

import (
	"errors"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/base64text"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

// base64Input is the base64 service's parameters.
type base64Input struct {
	Operation string  `json:"operation" doc:"encode: text to base64; decode: base64 to text."`
	Text      string  `json:"text" maxLength:"130048" doc:"encode: the text, whose UTF-8 bytes are encoded. decode: the base64; line breaks (CR, LF) are ignored."`
	Alphabet  *string `json:"alphabet,omitempty" enum:"standard,url" default:"standard" doc:"standard (+ and /) or url (- and _), RFC 4648."`
	Padding   *bool   `json:"padding,omitempty" default:"true" doc:"encode: end with '=' padding. decode: require it (true) or refuse it (false)."`
}

func computeBase64(ctx *guest.Context, in base64Input) (textOutput, error) {
	alphabet := base64text.Alphabet(bundled.String(in.Alphabet, "standard"))
	padding := bundled.Bool(in.Padding, true)
	var out string
	var err error
	switch in.Operation {
	case "encode":
		out, err = base64text.Encode(in.Text, alphabet, padding)
	case "decode":
		out, err = base64text.Decode(in.Text, alphabet, padding)
		var ne *base64text.NotUTF8Error
		if errors.As(err, &ne) {
			return textOutput{}, guest.InvalidInput("%s", ne.Error())
		}
	default:
		return textOutput{}, guest.Failed("unknown operation")
	}
	return textOutput{Text: out}, bundled.ToolError(err, map[error]string{base64text.ErrAlphabet: "unknown alphabet"})
}
