package pac

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/native"
	"github.com/toolhost/toolhost/internal/schema"
	"github.com/toolhost/toolhost/internal/testkit"
	"github.com/toolhost/toolhost/internal/tooldef"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// requireCBC skips a test that needs the cbc engine when it is missing,
// and fails it instead under CI=true, where .ci/run installs coinor-cbc.
func requireCBC(t *testing.T) {
	t.Helper()
	p := Package()
	testkit.RequireEngines(t, p.Name, p.MissingEngines())
}

// definition is the decoded, checked declaration of the service.
var definition = sync.OnceValues(func() (*tooldef.Definition, error) {
	pkg, err := tooldef.Decode(Package().Declaration, tooldef.Options{})
	if err != nil {
		return nil, err
	}
	if len(pkg.Services) != 1 {
		return nil, fmt.Errorf("%d services declared", len(pkg.Services))
	}
	if r := pkg.Services[0].Refusal; r != nil {
		return nil, r
	}
	return pkg.Services[0].Definition, nil
})

// validators are the compiled input and output schemas of the declaration.
var validators = sync.OnceValues(func() ([2]*schema.Validator, error) {
	def, err := definition()
	if err != nil {
		return [2]*schema.Validator{}, err
	}
	in, err := schema.Compile(def.InputSchema)
	if err != nil {
		return [2]*schema.Validator{}, err
	}
	out, err := schema.Compile(def.OutputSchema)
	return [2]*schema.Validator{in, out}, err
})

// newContext returns an execution context with the plan's budgets: a soft
// deadline 44 s away and a 30 s engine window.
func newContext(t *testing.T) *native.Context {
	t.Helper()
	return native.NewContext(t.Context(), "test", time.Now().Add(44*time.Second), 30*time.Second)
}

// run computes in with ctx as the worker would: the parameters must pass
// the declared input schema, and a result must pass the output schema.
func run(t *testing.T, ctx *native.Context, in Input) (Output, error) {
	t.Helper()
	v, err := validators()
	if err != nil {
		t.Fatalf("compiling the declared schemas: %v", err)
	}
	params := parameters(t, in)
	doc, err := wire.Decode(params, wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := v[0].Validate(doc, toolerr.InvalidParameters); err != nil {
		t.Fatalf("the test's parameters fail the input schema: %v %+v\n%s", err, err, params)
	}
	res, err := Compute(ctx, native.Call{ToolCode: Name, Operation: in.Operation, Parameters: params})
	if err != nil {
		return Output{}, err
	}
	doc, err = wire.Decode(res, wire.Limits{})
	if err != nil {
		t.Fatalf("the result is not strict JSON: %v\n%s", err, res)
	}
	if err := v[1].Validate(doc, toolerr.InvalidOutput); err != nil {
		var te *toolerr.Error
		errors.As(err, &te)
		t.Fatalf("the result fails the output schema: %+v\n%s", te, res)
	}
	var out Output
	dec := json.NewDecoder(bytes.NewReader(res))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decoding the result: %v", err)
	}
	return out, nil
}

// mustRun is run for an item that must not fail.
func mustRun(t *testing.T, in Input) Output {
	t.Helper()
	out, err := run(t, newContext(t), in)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	return out
}

// str returns a pointer to s, for optional parameters.
func str(s string) *string { return &s }

// holding returns a holding in EUR; price "" means absent.
func holding(id, quantity, price string) Holding {
	h := Holding{InstrumentID: id, Quantity: quantity, Currency: "EUR"}
	if price != "" {
		h.Price = &price
	}
	return h
}

// randomPlan returns a plan of n instruments with random holdings and
// weights, lot size lot, a 200 EUR minimum order, broker-like fees and at
// most maxOrders orders: an instance CBC does not prove optimal quickly.
func randomPlan(seed uint64, n, maxOrders int, lot string) Input {
	r := rand.New(rand.NewPCG(seed, 1))
	in := Input{Operation: OpPlan, Currency: "EUR", Contribution: "30000"}
	raw := make([]int, n)
	sum := 0
	for i := range n {
		raw[i] = 1 + r.IntN(1000)
		sum += raw[i]
	}
	acc := 0
	for i := range n {
		id := fmt.Sprintf("I%03d", i)
		price := fmt.Sprintf("%d.%02d", 3+r.IntN(400), r.IntN(100))
		in.Holdings = append(in.Holdings, Holding{InstrumentID: id, Quantity: fmt.Sprint(r.IntN(50)), Price: &price, Currency: "EUR"})
		w := raw[i] * 1_000_000 / sum // millionths; the last takes the rest
		if i == n-1 {
			w = 1_000_000 - acc
		}
		acc += w
		in.Targets = append(in.Targets, Target{InstrumentID: id, Weight: fmt.Sprintf("0.%06d", w), MinOrder: str("200"), LotSize: str(lot)})
	}
	in.Fees = &Fees{Fixed: str("1"), Proportional: str("0.0019"), Minimum: str("2.95")}
	in.MaxOrders = &maxOrders
	return in
}

// withTimeout returns a context whose engine window is engine long.
func withTimeout(t *testing.T, engine time.Duration) *native.Context {
	return native.NewContext(t.Context(), "test", time.Now().Add(engine+10*time.Second), engine)
}

// nativeCall returns a call of operation op of tool code with params.
func nativeCall(code, op, params string) native.Call {
	return native.Call{ToolCode: code, Operation: op, Parameters: []byte(params)}
}

// parameters encodes in as a caller would: only the fields its operation
// has (the ops tags of Input), none of the others.
func parameters(t *testing.T, in Input) []byte {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[Input]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		ops, ok := f.Tag.Lookup("ops")
		if ok && !slices.Contains(strings.Split(ops, ","), in.Operation) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			delete(m, name)
		}
	}
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
