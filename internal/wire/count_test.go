//go:build toolhost_count

package wire_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/wire"
)

// TestDecodesCounter checks the counter the decode-count tests rely on:
// every call of Decode, Encode and Append is recorded once,
// failed ones included, with the bytes it read or wrote and the first
// caller outside package wire; nothing is recorded outside
// StartCounting/StopCounting.
func TestDecodesCounter(t *testing.T) {
	if _, err := wire.Decode([]byte(`{"before":1}`), wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	wire.StartCounting()
	v, err := wire.Decode([]byte(`{"b":1,"a":[true]}`), wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wire.Decode([]byte(`{"a":1,"a":2}`), wire.Limits{}); err == nil {
		t.Fatal("a duplicate name was accepted")
	}
	if _, err := wire.Encode(v, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.Append([]byte("prefix:"), "x", wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := wire.Encode(make(chan int), wire.Limits{}); err == nil {
		t.Fatal("a channel was encoded")
	}
	calls := wire.StopCounting()
	if _, err := wire.Encode("after", wire.Limits{}); err != nil {
		t.Fatal(err)
	}

	want := []struct {
		encode bool
		data   string
		nilled bool
	}{
		{false, `{"b":1,"a":[true]}`, false},
		{false, `{"a":1,"a":2}`, false},
		{true, `{"a":[true],"b":1}`, false},
		{true, `"x"`, false}, // the appended bytes alone, not the prefix
		{true, ``, true},
	}
	if len(calls) != len(want) {
		t.Fatalf("%d calls recorded, want %d: %v", len(calls), len(want), calls)
	}
	for i, w := range want {
		c := calls[i]
		if c.Encode != w.encode || !bytes.Equal(c.Data, []byte(w.data)) || (c.Data == nil) != w.nilled {
			t.Errorf("call %d: %v, want encode=%v %q", i, c, w.encode, w.data)
		}
		if !strings.HasPrefix(c.Caller, "github.com/toolhost/toolhost/internal/wire_test.TestDecodesCounter ") || !strings.Contains(c.Caller, "count_test.go:") {
			t.Errorf("call %d: caller %q, want this test", i, c.Caller)
		}
		if len(c.Stack) < 2 || c.Stack[0] != c.Caller {
			t.Errorf("call %d: stack %q", i, c.Stack)
		}
	}
	if again := wire.StopCounting(); len(again) != 0 {
		t.Errorf("calls recorded after StopCounting: %v", again)
	}
}
