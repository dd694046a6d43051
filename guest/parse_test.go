//go:build !wasip1 && !guestgen

package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The strict parser and integer reader were written on encoding/json and
// math/big; these are those versions, kept as the reference the SDK's
// own (which link neither) must agree with.

// parseJSON decodes one JSON value strictly: duplicate names, trailing data
// and nesting deeper than depth are refused; numbers stay json.Number.
func refParseJSON(data []byte, depth int) (any, error) {
	p := refNewParser(data, depth)
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	return v, p.end()
}

type refParser struct {
	dec   *json.Decoder
	depth int
}

func refNewParser(data []byte, depth int) *refParser {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &refParser{dec: dec, depth: depth}
}

// end refuses anything but the end of the text.
func (p *refParser) end() error {
	if _, err := p.dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func (p *refParser) value(depth int) (any, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= p.depth {
		return nil, errTooDeep
	}
	var v any
	switch d {
	case '{':
		m := map[string]any{}
		for p.dec.More() {
			k, err := p.dec.Token()
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if _, dup := m[key]; dup {
				return nil, errDuplicateName
			}
			if m[key], err = p.value(depth + 1); err != nil {
				return nil, err
			}
		}
		v = m
	case '[':
		a := []any{}
		for p.dec.More() {
			item, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, item)
		}
		v = a
	default:
		return nil, errors.New("unexpected delimiter")
	}
	if _, err := p.dec.Token(); err != nil { // the closing delimiter
		return nil, err
	}
	return v, nil
}

// envelope is the compute input: {"tool_code","operation","parameters"}.

// parseEnvelope decodes the compute input strictly. A malformed envelope is
// the host's fault (execution_failed); a duplicate name or excessive
// nesting inside the parameters is the caller's (invalid_parameters).
func refParseEnvelope(data []byte) (envelope, *Error) {
	var env envelope
	bad := func(reason string) (envelope, *Error) {
		return envelope{}, sdkFailure("compute input: " + reason)
	}
	p := refNewParser(data, maxDepth)
	if tok, err := p.dec.Token(); err != nil || tok != json.Delim('{') {
		return bad("not a JSON object")
	}
	seen := map[string]bool{}
	for p.dec.More() {
		k, err := p.dec.Token()
		if err != nil {
			return bad("not valid JSON")
		}
		key := k.(string)
		if seen[key] {
			return bad("a member is repeated")
		}
		seen[key] = true
		switch key {
		case "tool_code", "operation":
			v, err := p.value(1)
			s, ok := v.(string)
			if err != nil || !ok {
				return bad(key + " is not a string")
			}
			if key == "tool_code" {
				env.toolCode = s
			} else {
				env.operation = s
			}
		case "parameters":
			v, err := p.value(1)
			if errors.Is(err, errDuplicateName) || errors.Is(err, errTooDeep) {
				return envelope{}, &Error{Code: CodeInvalidParameters, Message: "parameters: " + err.Error()}
			}
			if err != nil {
				return bad("parameters are not valid JSON")
			}
			env.parameters = v
		default:
			return bad("unknown member")
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return bad("not valid JSON")
	}
	if err := p.end(); err != nil {
		return bad("data after the JSON value")
	}
	for _, key := range []string{"tool_code", "operation", "parameters"} {
		if !seen[key] {
			return bad("missing " + key)
		}
	}
	return env, nil
}

func refInteger(lit string) (*big.Int, bool) {
	if i, ok := new(big.Int).SetString(lit, 10); ok {
		return i, true
	}
	if e := strings.IndexAny(lit, "eE"); e >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(lit[e+1:], "+"))
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok || !r.IsInt() {
		return nil, false
	}
	return r.Num(), true
}

// jsonCorpus are documents at the edges of the grammar.
var jsonCorpus = []string{
	`{}`, `[]`, ` {"a":1} `, `{"a":1,}`, `[1,]`, `{,"a":1}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a":1]`,
	`[1 2]`, `01`, `[01]`, `-`, `-0`, `-0.0e-0`, `1.`, `.5`, `1e`, `1e+`, `1E+05`, `tru`, `true`, `truex`, `nul`, `null`,
	`"a\u00e9\ud83d\ude00\ud800x\ud83d\u0041"`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", "\"\xff\xfe ok\"", "\"\xed\xa0\x80\"",
	`"\/\b\f\n\r\t\"\\"`, `{"a":{"a":1},"b":[1,{"c":null}]}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{"a":1,"a" 2}`,
	`{"a":1}{}`, `{"a":1} x`, ``, `   `, `{`, `[`, `"abc`, `{"a":}`, `[,]`, `{"a":1,"b"}`, "\"tab\there\"",
	strings.Repeat("[", 130) + strings.Repeat("]", 130), strings.Repeat("[", 127) + strings.Repeat("]", 127),
	`{"tool_code":"t","operation":"o","parameters":{"a":1}}`, `{"tool_code":"t","operation":"o"}`, `{"tool_code":1,"operation":"o","parameters":{}}`,
	`{"tool_code":"t","tool_code":"t"}`, `{"x":1}`, `{"tool_code"}`, `{"parameters"}`, `{"parameters":{"a":1,"a":2}}`, `{"tool_code":"t",}`,
	`{"tool_code":"t","operation":"o","parameters":[1,2]} `, `{"tool_code":"t","operation":"o","parameters":{}}]`, `["tool_code"]`,
	`{"tool_code":"t","operation":{"a":1,"a":1},"parameters":{}}`, `{"tool_code":"t","operation":"o","parameters":` + strings.Repeat("[", 130) + strings.Repeat("]", 130) + `}`,
}

// mutate returns s with a few random bytes changed, inserted or removed.
func mutate(r *rand.Rand, s string) string {
	b := []byte(s)
	const alphabet = "{}[],:\\" + `"` + " 0123456789.eE+-tfnulrsa\x00\x1f\xff\xc3\xa9"
	for range 1 + r.IntN(3) {
		switch i := r.IntN(len(b) + 1); r.IntN(3) {
		case 0:
			b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
		case 1:
			if i < len(b) {
				b = append(b[:i], b[i+1:]...)
			}
		default:
			if i < len(b) {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
	}
	return string(b)
}

func sameError(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	for _, sentinel := range []error{errDuplicateName, errTooDeep} {
		if errors.Is(a, sentinel) != errors.Is(b, sentinel) {
			return false
		}
	}
	return true
}

// normalize turns json.Number into number, so that values compare.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		return number(x)
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

func checkParseAgrees(t *testing.T, doc string) {
	t.Helper()
	got, err := parseJSON([]byte(doc), maxDepth)
	want, wantErr := refParseJSON([]byte(doc), maxDepth)
	if !sameError(err, wantErr) || err == nil && !reflect.DeepEqual(got, normalize(want)) {
		t.Errorf("parseJSON(%q) = %#v, %v; encoding/json: %#v, %v", doc, got, err, want, wantErr)
	}
	env, e := parseEnvelope([]byte(doc))
	wantEnv, wantE := refParseEnvelope([]byte(doc))
	wantEnv.parameters = normalize(wantEnv.parameters)
	if !reflect.DeepEqual(e, wantE) || e == nil && !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("parseEnvelope(%q) = %#v, %v; encoding/json: %#v, %v", doc, env, e, wantEnv, wantE)
	}
}

func TestParserAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range jsonCorpus {
		checkParseAgrees(t, doc)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkParseAgrees(t, mutate(r, jsonCorpus[r.IntN(len(jsonCorpus))]))
	}
}

func FuzzParser(f *testing.F) {
	for _, doc := range jsonCorpus {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) { checkParseAgrees(t, doc) })
}

func TestIntegerAgreesWithBig(t *testing.T) {
	lits := []string{"0", "-0", "1", "-1", "0.0", "-0.0e-0", "2.0", "2.5", "1e3", "1E+3", "1.5e1", "1.25e1", "1e-3", "100e-2", "1000e-2", "1e400", "1e401", "1e-401", "0e500",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
		"1.8446744073709551615e19", "1.8446744073709551616e19", "-1e19", "123456789012345678901234567890", "0.000000e5", "1e0000000000000000000001", "1e99999999999999999999"}
	for range 2000 {
		lits = append(lits, strconv.FormatFloat(rand.NormFloat64()*1e19, 'g', -1, 64), strconv.FormatInt(rand.Int64()-rand.Int64(), 10), strconv.FormatUint(rand.Uint64(), 10))
	}
	for _, lit := range lits {
		got, ok := integer(lit)
		want, wantOK := refInteger(lit)
		if ok != wantOK {
			t.Errorf("integer(%s) ok = %v, math/big says %v", lit, ok, wantOK)
			continue
		}
		if !ok {
			continue
		}
		i, fits := got.int64()
		if fits != want.IsInt64() || fits && i != want.Int64() {
			t.Errorf("integer(%s).int64() = %d, %v; math/big: %v %v", lit, i, fits, want, want.IsInt64())
		}
		u, fits := got.uint64()
		if fits != want.IsUint64() || fits && u != want.Uint64() {
			t.Errorf("integer(%s).uint64() = %d, %v; math/big: %v %v", lit, u, fits, want, want.IsUint64())
		}
	}
}
