package main

import (
	"errors"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/binenc"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
)

// hexInput is the hex service's parameters.
type hexInput struct {
	Operation string  `json:"operation" doc:"encode: text to hex; decode: hex to text."`
	Text      string  `json:"text" maxLength:"130048" doc:"encode: the text, whose UTF-8 bytes are encoded. decode: the hex digits, of either case; spaces, tabs and line breaks between them are ignored."`
	Case      *string `json:"case,omitempty" ops:"encode" enum:"lower,upper" default:"lower" doc:"The case of the digits a-f."`
}

func computeHex(ctx *guest.Context, in hexInput) (textOutput, error) {
	switch in.Operation {
	case "encode":
		return textOutput{Text: binenc.HexEncode(in.Text, bundled.String(in.Case, "lower") == "upper")}, nil
	case "decode":
		out, err := binenc.HexDecode(in.Text)
		return textOutput{Text: out}, decodeError(err)
	}
	return textOutput{}, guest.Failed("unknown operation")
}

// base32Input is the base32 service's parameters.
type base32Input struct {
	Operation string  `json:"operation" doc:"encode: text to base32; decode: base32 to text."`
	Text      string  `json:"text" maxLength:"130048" doc:"encode: the text, whose UTF-8 bytes are encoded. decode: the base32, letters of either case; line breaks (CR, LF) are ignored."`
	Alphabet  *string `json:"alphabet,omitempty" enum:"standard,hex" default:"standard" doc:"standard (A-Z, 2-7; RFC 4648 section 6) or hex (0-9, A-V; section 7, which sorts like the data)."`
	Padding   *bool   `json:"padding,omitempty" default:"true" doc:"encode: end with '=' padding to a multiple of 8 characters. decode: require it (true) or refuse it (false)."`
}

func computeBase32(ctx *guest.Context, in base32Input) (textOutput, error) {
	a := binenc.Base32Alphabet(bundled.String(in.Alphabet, "standard"))
	padding := bundled.Bool(in.Padding, true)
	switch in.Operation {
	case "encode":
		out, err := binenc.Base32Encode(in.Text, a, padding)
		return textOutput{Text: out}, decodeError(err)
	case "decode":
		out, err := binenc.Base32Decode(in.Text, a, padding)
		return textOutput{Text: out}, decodeError(err)
	}
	return textOutput{}, guest.Failed("unknown operation")
}

// base58Input is the base58 service's parameters.
type base58Input struct {
	Operation string `json:"operation" doc:"encode: text to base58; decode: base58 to text."`
	Text      string `json:"text" maxLength:"16384" doc:"encode: the text, whose UTF-8 bytes (at most 16 KiB) are encoded. decode: the base58 (Bitcoin alphabet, no white space)."`
}

func computeBase58(ctx *guest.Context, in base58Input) (textOutput, error) {
	var out string
	var err error
	switch in.Operation {
	case "encode":
		out, err = binenc.Base58Encode(in.Text)
	case "decode":
		out, err = binenc.Base58Decode(in.Text)
	default:
		return textOutput{}, guest.Failed("unknown operation")
	}
	return textOutput{Text: out}, decodeError(err)
}

// decodeError maps the binenc errors to tool errors.
func decodeError(err error) error {
	var ne *binenc.NotUTF8Error
	if errors.As(err, &ne) {
		return guest.InvalidInput("%s", ne.Error())
	}
	return bundled.ToolError(err, map[error]string{
		binenc.ErrOption:  "unknown alphabet",
		binenc.ErrTooLong: "text is over base58's bound of 16 KiB (16,384 bytes of UTF-8)",
	})
}
