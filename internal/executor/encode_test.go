package executor

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// stdJSON is what the compute route answered with before AppendJSON:
// encoding/json without HTML escaping, less the final newline.
func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// TestAppendJSON: the hand-written encoding of a batch result is
// encoding/json's, byte for byte, over successes and failures, null and
// present metrics, floats in both notations, strings that need escaping
// and results with whitespace to compact.
func TestAppendJSON(t *testing.T) {
	odd := "a\"b\\c\n\t\x01\x7f<>&é\u2028\u2029\xff"
	floats := []float64{0, 1, 0.125, 1.0 / 3, 123456.789, 1e-6, 9.99e-7, 1e-7, 1.5e-12, 1e20, 1e21, 1.234e25, -0.5, -2e-9, math.SmallestNonzeroFloat64, math.MaxFloat64}
	var items []ItemResult
	for i, f := range floats {
		items = append(items, ItemResult{
			CorrelationID: "c-1", ToolCode: "hash", ContractVersion: "1.0.0", ImplementationVersion: "1.2.3",
			SchemaFingerprint: "0123456789abcdef", Status: StatusSuccess, ExecutionID: "e1",
			Result:  json.RawMessage(`{ "digest" : "ab\u00e9",` + "\n\t" + `"n":[1, 2.50,  {"x":"<&>"}] }`),
			Metrics: Metrics{QueueWaitMS: f64(f), StartupMS: f64(-f), ExecutionMS: f64(f / 3), TotalMS: f64(float64(i))},
			Resources: Resources{Memory: &engine.Memory{Mode: engine.MemoryWASMHard, LimitBytes: 1 << 30, PeakBytes: i64(65536)},
				FuelUsed: i64(int64(i) * 1000)},
		})
	}
	items = append(items,
		ItemResult{CorrelationID: odd, ToolCode: odd, ContractVersion: "", Status: StatusError,
			Error: toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("required", "text", odd))},
		ItemResult{CorrelationID: "c-3", Status: StatusError, ExecutionID: "e3",
			Error:     &toolerr.Error{Code: "tool_failed", Message: odd, Issues: nil},
			Resources: Resources{Memory: &engine.Memory{Mode: "process_tree_observed"}}},
		ItemResult{Status: StatusSuccess, Result: json.RawMessage(`"x"`)},
	)
	for _, br := range []*BatchResult{
		{RequestID: "r-1", Results: items, SuccessCount: 3, FailedCount: 2, ServerProcessingMS: f64(12.5)},
		{RequestID: odd, Results: items[:1]},
		{RequestID: "", Results: []ItemResult{}},
		{},
	} {
		got, err := br.AppendJSON([]byte("prefix:"))
		if err != nil {
			t.Fatal(err)
		}
		want := append([]byte("prefix:"), stdJSON(t, br)...)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
	// encoding/json refuses a NaN and an invalid result; so does AppendJSON.
	for _, bad := range []*BatchResult{
		{ServerProcessingMS: f64(math.NaN())},
		{Results: []ItemResult{{Result: json.RawMessage(`{"a":`)}}},
	} {
		if _, err := bad.AppendJSON(nil); err == nil {
			t.Errorf("AppendJSON accepted %+v", bad)
		}
	}
}
