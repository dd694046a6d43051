package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/retext"
)

var regexTexts = map[string]guest.Text{
	"en": {Name: "Regex tester", Description: "Test a regular expression (RE2) on a text, replace its matches, or extract them with their groups."},
	"it": {Name: "Tester di espressioni regolari", Description: "Prova un'espressione regolare (RE2) su un testo, ne sostituisce le corrispondenze o le estrae con i loro gruppi."},
	"fr": {Name: "Testeur d'expressions régulières", Description: "Tester une expression régulière (RE2) sur un texte, en remplacer les correspondances ou les extraire avec leurs groupes."},
	"es": {Name: "Probador de expresiones regulares", Description: "Prueba una expresión regular (RE2) en un texto, reemplaza sus coincidencias o las extrae con sus grupos."},
}

// regexInput is the regex service's parameters.
type regexInput struct {
	Operation   string `json:"operation" doc:"test: whether and how often the pattern matches; replace: replace every match; extract: the matches and their groups."`
	Pattern     string `json:"pattern" maxLength:"1024" doc:"The pattern, in RE2 syntax (no lookaround, no backreferences)."`
	Text        string `json:"text" maxLength:"130048" doc:"The text to search."`
	IgnoreCase  *bool  `json:"ignore_case,omitempty" default:"false" doc:"Letters match either case (flag i)."`
	Multiline   *bool  `json:"multiline,omitempty" default:"false" doc:"^ and $ match at every line's start and end (flag m)."`
	DotAll      *bool  `json:"dot_all,omitempty" default:"false" doc:". matches a line feed too (flag s)."`
	Replacement string `json:"replacement" ops:"replace" maxLength:"4096" doc:"What replaces each match: $1, ${1}, ${name} insert groups, $$ a dollar sign."`
	Literal     *bool  `json:"literal,omitempty" ops:"replace" default:"false" doc:"Insert the replacement as written, with no $ expansion."`
	Limit       *int   `json:"limit,omitempty" ops:"extract" minimum:"1" maximum:"1000" default:"100" doc:"The most matches to return."`
}

// regexMatch is one extracted match.
type regexMatch struct {
	Match  string   `json:"match" doc:"The matched text."`
	Start  int      `json:"start" doc:"Where it starts, in code points from the start of the text (0-based)."`
	End    int      `json:"end" doc:"Where it ends (exclusive), in code points."`
	Groups []string `json:"groups" doc:"The capture groups, 1 to n; a group that took no part is empty."`
}

// regexOutput is its result.
type regexOutput struct {
	Matched bool         `json:"matched" ops:"test" doc:"Whether the pattern matches the text."`
	Count   int          `json:"count" ops:"test,replace" doc:"test: non-overlapping matches; replace: matches replaced."`
	Text    string       `json:"text" ops:"replace" doc:"The text with every match replaced."`
	Matches []regexMatch `json:"matches" ops:"extract" maxItems:"1000" doc:"The first matches, in order."`
	More    bool         `json:"more" ops:"extract" doc:"Whether the text has more matches than limit."`
}

func computeRegex(ctx *guest.Context, in regexInput) (regexOutput, error) {
	re, err := retext.Compile(in.Pattern, retext.Flags{
		IgnoreCase: bundled.Bool(in.IgnoreCase, false),
		Multiline:  bundled.Bool(in.Multiline, false),
		DotAll:     bundled.Bool(in.DotAll, false),
	})
	if err != nil {
		return regexOutput{}, guest.InvalidInput("%s", err.Error())
	}
	switch in.Operation {
	case "test":
		ok, n := retext.Test(re, in.Text)
		return regexOutput{Matched: ok, Count: n}, nil
	case "replace":
		out, n, err := retext.Replace(re, in.Text, in.Replacement, bundled.Bool(in.Literal, false), bundled.MaxResultBytes)
		if err != nil {
			return regexOutput{}, bundled.ToolError(err, map[error]string{retext.ErrTooLarge: errTooLarge.Error()})
		}
		return regexOutput{Text: out, Count: n}, nil
	case "extract":
		ms, more, err := retext.Extract(re, in.Text, bundled.Int(in.Limit, 100), bundled.MaxResultBytes/2)
		if err != nil {
			return regexOutput{}, bundled.ToolError(err, map[error]string{retext.ErrTooLarge: errTooLarge.Error()})
		}
		out := regexOutput{Matches: make([]regexMatch, len(ms)), More: more}
		for i, m := range ms {
			out.Matches[i] = regexMatch{Match: m.Text, Start: m.Start, End: m.End, Groups: m.Groups}
			if out.Matches[i].Groups == nil {
				out.Matches[i].Groups = []string{}
			}
		}
		return out, nil
	}
	return regexOutput{}, guest.Failed("unknown operation")
}
