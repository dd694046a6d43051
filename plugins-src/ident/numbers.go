package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/radix"
)

// numberBaseInput is the number_base service's parameters.
type numberBaseInput struct {
	Operation string  `json:"operation" doc:"convert: write the value in another base."`
	Value     string  `json:"value" minLength:"1" maxLength:"4097" doc:"An integer in base from: an optional sign (- or +) and 1 to 4,096 digits (0-9, then a-z of either case for 10 to 35). No prefix (0x), separators or white space."`
	From      int     `json:"from" minimum:"2" maximum:"36" doc:"The base value is written in, 2 to 36."`
	To        int     `json:"to" minimum:"2" maximum:"36" doc:"The base to write it in, 2 to 36."`
	Case      *string `json:"case,omitempty" enum:"lower,upper" default:"lower" doc:"The case of the letter digits in the result."`
}

// numberBaseOutput is its result.
type numberBaseOutput struct {
	Value string `json:"value" doc:"The integer in base to, without leading zeros; negative values start with '-'."`
}

func computeNumberBase(ctx *guest.Context, in numberBaseInput) (numberBaseOutput, error) {
	out, err := radix.Convert(in.Value, in.From, in.To, bundled.String(in.Case, "lower") == "upper")
	return numberBaseOutput{Value: out}, bundled.ToolError(err, map[error]string{
		radix.ErrBase:    "bases are 2 to 36",
		radix.ErrTooLong: "value has more than 4,096 digits",
	})
}
