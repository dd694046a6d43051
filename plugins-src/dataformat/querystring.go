package main

import (
	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/plugins-src/internal/bundled"
	"github.com/toolhost/toolhost/plugins-src/internal/querystring"
)

// queryInput is the query_string service's parameters.
type queryInput struct {
	Operation string      `json:"operation" doc:"parse: a query string to its pairs; build: pairs to a query string."`
	Text      string      `json:"text,omitempty" ops:"parse" maxLength:"130048" doc:"The query string: bare (a=1&b=2), after a '?', or a whole URL (its fragment is ignored)."`
	Pairs     []queryPair `json:"pairs,omitempty" ops:"build" maxItems:"1000" doc:"The pairs, in order; a name may repeat."`
}

// queryPair is one name and its value.
type queryPair struct {
	Key   string  `json:"key" maxLength:"4096" doc:"The name, decoded."`
	Value *string `json:"value,omitempty" maxLength:"65536" doc:"The value, decoded; absent for a name without '=' (a=1&flag)."`
}

// queryOutput is its result.
type queryOutput struct {
	Pairs []queryPair `json:"pairs" ops:"parse" doc:"The pairs in their order, names and values decoded ('+' is a space)."`
	Text  string      `json:"text" ops:"build" doc:"The query string, without '?': names and values percent-encoded as HTML forms do."`
}

func computeQuery(ctx *guest.Context, in queryInput) (queryOutput, error) {
	invalid := map[error]string{querystring.ErrTooMany: "the query string holds more than 10,000 pairs"}
	switch in.Operation {
	case "parse":
		pairs, err := querystring.Parse(in.Text)
		if err != nil {
			return queryOutput{}, bundled.ToolError(err, invalid)
		}
		out := queryOutput{Pairs: make([]queryPair, len(pairs))}
		for i, p := range pairs {
			out.Pairs[i].Key = p.Key
			if p.HasValue {
				out.Pairs[i].Value = &p.Value
			}
		}
		return out, nil
	case "build":
		pairs := make([]querystring.Pair, len(in.Pairs))
		for i, p := range in.Pairs {
			pairs[i] = querystring.Pair{Key: p.Key, Value: bundled.String(p.Value, ""), HasValue: p.Value != nil}
		}
		s, err := querystring.Build(pairs)
		return queryOutput{Text: s}, bundled.ToolError(err, invalid)
	}
	return queryOutput{}, guest.Failed("unknown operation")
}
