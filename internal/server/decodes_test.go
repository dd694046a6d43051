//go:build toolhost_count

package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/wire"
)

// The decode-count tests (issue 12: "one decode on the way in, one encode
// of the result on the way out"). They need the toolhost_count build tag,
// which makes package wire record every Decode and Encode/Append call with
// its bytes and its caller's stack:
//
//	go test -count=1 -tags toolhost_count -run Decodes ./internal/...
//
// The counter is process-wide, so each test counts one request on a
// server that has nothing else to do: one module in a folder nobody
// writes to, rescans an hour apart, no jobs, its catalogue read before
// counting starts. Calls are told apart by their bytes, not by where they
// are made, so the tests do not fix which function does the work:
//
//   - a decode of the parameters is a Decode whose input holds the run's
//     unique text; the one allowed is the request body's;
//   - the parameters are handed on as bytes: one Encode holds the text,
//     the canonical parameters the executor and the guest receive;
//   - the result goes out encoded once: one Encode holds the digest, and
//     its bytes are exactly the answer's "result" (the route embeds them
//     as they are, json.RawMessage, without decoding them again);
//   - the one other call is the host's output validation, a Decode of the
//     guest's own output bytes (which hold the digest), that checks it
//     against the output schema and is the input of that one Encode.
//
// Anything else — a second decode of the parameters, a decode of the
// answer, an encode nobody needs — fails the test, and the failure lists
// every call with its stack.

// decodesServer is a server over the codec module alone, with nothing
// running in the background that decodes.
func decodesServer(t *testing.T) *rig {
	return startConfigured(t, map[string][]byte{"codec.wasm": module(t, "plugins-src/codec")}, false, func(c *server.Config) {
		c.Rescan = time.Hour
	})
}

// countedCalls are the wire calls one request made.
type countedCalls []wire.Call

// holding returns the decodes (encode false) or encodes whose bytes hold s.
func (cs countedCalls) holding(encode bool, s string) []wire.Call {
	var out []wire.Call
	for _, c := range cs {
		if c.Encode == encode && bytes.Contains(c.Data, []byte(s)) {
			out = append(out, c)
		}
	}
	return out
}

// count returns how many decodes (encode false) or encodes there are.
func (cs countedCalls) count(encode bool) int {
	n := 0
	for _, c := range cs {
		if c.Encode == encode {
			n++
		}
	}
	return n
}

// String lists every call with its stack, for a failure message.
func (cs countedCalls) String() string {
	var b strings.Builder
	for i, c := range cs {
		fmt.Fprintf(&b, "\n%d. %v\n\t%s", i+1, c, strings.Join(c.Stack, "\n\t"))
	}
	return b.String()
}

// digestHex is the hash tool's sha256 hex digest of text.
func digestHex(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// checkOneItem checks the calls of one item whose parameters hold the
// unique text and whose result holds digest, given the result bytes the
// answer carried; body is the request body, the one decode allowed to
// hold the text.
func checkOneItem(t *testing.T, calls countedCalls, body []byte, text, digest string, answered json.RawMessage) {
	t.Helper()
	if ds := calls.holding(false, text); len(ds) != 1 || !bytes.Equal(ds[0].Data, body) {
		t.Errorf("%s: the parameters were decoded %d times, want once (the request body):%v", text, len(ds), countedCalls(ds))
	}
	if es := calls.holding(true, text); len(es) != 1 {
		t.Errorf("%s: the parameters were encoded %d times, want once (the bytes handed on):%v", text, len(es), countedCalls(es))
	}
	if ds := calls.holding(false, digest); len(ds) != 1 {
		t.Errorf("%s: the guest's output was decoded %d times, want once (the output validation):%v", text, len(ds), countedCalls(ds))
	}
	es := calls.holding(true, digest)
	if len(es) != 1 {
		t.Errorf("%s: the result was encoded %d times, want once:%v", text, len(es), countedCalls(es))
	} else if !bytes.Equal(es[0].Data, answered) {
		t.Errorf("%s: the answer's result %s is not the bytes encoded once, %s", text, answered, es[0].Data)
	}
}

// TestDecodesRun counts one sync run on the ADR-027 run route: the body is
// decoded once (the parameters with it), the parameters are encoded once
// into the bytes the guest gets, the guest's output is decoded once to be
// validated and encoded once into the canonical result the answer embeds.
func TestDecodesRun(t *testing.T) {
	r := decodesServer(t)
	text := "decodes-run-" + t.Name()
	body := []byte(`{"input":{"operation":"digest","text":"` + text + `","algorithm":"sha256"}}`)

	wire.StartCounting()
	status, _, ans := r.do("POST", "/api/v1/tools/hash/run", r.token, body)
	calls := countedCalls(wire.StopCounting())

	if status != http.StatusOK {
		t.Fatalf("run: %d %s", status, ans)
	}
	var doc struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(ans, &doc); err != nil || doc.Status != "succeeded" {
		t.Fatalf("run: %v in %s", err, ans)
	}
	digest := digestHex(text)
	if want := `{"digest":"` + digest + `"}`; string(doc.Result) != want {
		t.Fatalf("run: result %s, want %s", doc.Result, want)
	}
	checkOneItem(t, calls, body, text, digest, doc.Result)
	if d, e := calls.count(false), calls.count(true); d != 2 || e != 2 {
		t.Errorf("the run made %d decodes and %d encodes, want 2 and 2 (the body, the parameters' bytes, the output validation, the result):%v", d, e, calls)
	}
}

// TestDecodesCompute counts one seed-000 compute batch of two items: the
// body is decoded once, and no item's parameters are decoded after it;
// each item's parameters are encoded once, and each result is decoded once
// (the guest's output, validated) and encoded once.
func TestDecodesCompute(t *testing.T) {
	r := decodesServer(t)
	texts := []string{"decodes-compute-a-" + t.Name(), "decodes-compute-b-" + t.Name()}
	items := make([]map[string]any, len(texts))
	for i, text := range texts {
		items[i] = r.item(fmt.Sprint(i), "hash", map[string]any{"operation": "digest", "text": text, "algorithm": "sha256"})
	}
	body := encode(t, map[string]any{"request_id": "decodes", "items": items})

	wire.StartCounting()
	status, _, ans := r.do("POST", "/api/v1/tools/compute", r.token, body)
	calls := countedCalls(wire.StopCounting())

	if status != http.StatusOK {
		t.Fatalf("compute: %d %s", status, ans)
	}
	var res batchResult
	if err := json.Unmarshal(ans, &res); err != nil || len(res.Results) != len(texts) {
		t.Fatalf("compute: %v in %s", err, ans)
	}
	for i, text := range texts {
		got := res.Results[i]
		digest := digestHex(text)
		if want := `{"digest":"` + digest + `"}`; got.Status != "success" || string(got.Result) != want {
			t.Fatalf("item %d: %s %s, want success %s", i, got.Status, got.Result, want)
		}
		checkOneItem(t, calls, body, text, digest, got.Result)
	}
	if d, e := calls.count(false), calls.count(true); d != 1+len(texts) || e != 2*len(texts) {
		t.Errorf("the batch made %d decodes and %d encodes, want %d and %d (the body, then per item the parameters' bytes, the output validation, the result):%v",
			d, e, 1+len(texts), 2*len(texts), calls)
	}
}
