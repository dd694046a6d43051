package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/csvjson"
	"github.com/toolhost/toolhost/plugins-src/internal/jsontree"
)

// csvInput is the csv_json service's parameters.
type csvInput struct {
	Operation  string  `json:"operation" doc:"csv_to_json: CSV text to a JSON array; json_to_csv: a JSON array of objects or of arrays to CSV."`
	Text       string  `json:"text" maxLength:"130048" doc:"csv_to_json: the CSV (RFC 4180; fields may be quoted with '\"'). json_to_csv: the JSON array."`
	Delimiter  *string `json:"delimiter,omitempty" enum:"comma,semicolon,tab,pipe" default:"comma" doc:"The field separator: ',', ';', a tab or '|'."`
	Header     *bool   `json:"header,omitempty" default:"true" doc:"csv_to_json: the first row names the columns and each row becomes an object (false: each row an array of strings). json_to_csv: write a row of column names first (arrays of objects)."`
	Typed      *bool   `json:"typed,omitempty" ops:"csv_to_json" default:"false" doc:"Write fields that are JSON numbers as numbers, true and false as booleans and empty fields as null; all others stay strings."`
	LazyQuotes *bool   `json:"lazy_quotes,omitempty" ops:"csv_to_json" default:"false" doc:"Accept a '\"' inside an unquoted field and a lone '\"' inside a quoted one."`
	Ragged     *bool   `json:"ragged,omitempty" ops:"csv_to_json" default:"false" doc:"Accept rows with fewer or more fields than the first (with header, never more than the header)."`
	Indent     *int    `json:"indent,omitempty" ops:"csv_to_json" minimum:"0" maximum:"8" default:"2" doc:"Spaces per nesting level of the JSON; 0 is compact."`
	Quote      *string `json:"quote,omitempty" ops:"json_to_csv" enum:"minimal,all" default:"minimal" doc:"minimal: quote only fields that need it (delimiter, quote, line break, edge space); all: quote every field."`
	LineEnding *string `json:"line_ending,omitempty" ops:"json_to_csv" enum:"lf,crlf" default:"lf" doc:"What ends each row: LF, or CR LF as RFC 4180 writes."`
}

// csvErrors are the csvjson and jsontree errors that are the caller's to fix.
var csvErrors = map[error]string{
	csvjson.ErrDelimiter: "unknown delimiter",
	csvjson.ErrShape:     "text must be a JSON array whose elements are all objects or all arrays",
	jsontree.ErrTooLarge: "the converted text would exceed the 256 KiB result limit",
}

func computeCSV(ctx *guest.Context, in csvInput) (textOutput, error) {
	delim := bundled.String(in.Delimiter, "comma")
	switch in.Operation {
	case "csv_to_json":
		v, err := csvjson.ToJSON(in.Text, csvjson.ReadOptions{
			Delimiter:  delim,
			Header:     bundled.Bool(in.Header, true),
			Typed:      bundled.Bool(in.Typed, false),
			LazyQuotes: bundled.Bool(in.LazyQuotes, false),
			Ragged:     bundled.Bool(in.Ragged, false),
		})
		if err != nil {
			return textOutput{}, bundled.ToolError(err, csvErrors)
		}
		out, err := jsontree.Encode(v, bundled.Int(in.Indent, 2), bundled.MaxResultBytes)
		return textOutput{Text: out}, bundled.ToolError(err, csvErrors)
	case "json_to_csv":
		v, err := jsontree.Parse(in.Text, "text is not valid JSON")
		if err != nil {
			return textOutput{}, bundled.ToolError(err, csvErrors)
		}
		out, err := csvjson.FromJSON(v, csvjson.WriteOptions{
			Delimiter: delim,
			Header:    bundled.Bool(in.Header, true),
			QuoteAll:  bundled.String(in.Quote, "minimal") == "all",
			CRLF:      bundled.String(in.LineEnding, "lf") == "crlf",
			MaxBytes:  bundled.MaxResultBytes,
		})
		return textOutput{Text: out}, bundled.ToolError(err, csvErrors)
	}
	return textOutput{}, guest.Failed("unknown operation")
}
