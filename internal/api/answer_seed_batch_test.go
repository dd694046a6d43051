package api

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// seedBatch is the seed-000 compute answer as encoding/json wrote it
// before appendSeedBatch: the executor's batch result, whose tags it
// copies, with durations in float milliseconds and null for the
// unobserved.
type seedBatch struct {
	RequestID          string     `json:"request_id"`
	Results            []seedItem `json:"results"`
	SuccessCount       int        `json:"success_count"`
	FailedCount        int        `json:"failed_count"`
	ServerProcessingMS *float64   `json:"server_processing_ms"`
}

type seedItem struct {
	CorrelationID         string          `json:"correlation_id"`
	ToolCode              string          `json:"tool_code"`
	ContractVersion       string          `json:"contract_version"`
	ImplementationVersion string          `json:"implementation_version"`
	SchemaFingerprint     string          `json:"schema_fingerprint"`
	Status                string          `json:"status"`
	ExecutionID           string          `json:"execution_id,omitempty"`
	Result                json.RawMessage `json:"result,omitempty"`
	Error                 *toolerr.Error  `json:"error,omitempty"`
	Metrics               struct {
		QueueWaitMS        *float64 `json:"queue_wait_ms"`
		StartupMS          *float64 `json:"startup_ms"`
		InputValidationMS  *float64 `json:"input_validation_ms"`
		ComputeMS          *float64 `json:"compute_ms"`
		OutputValidationMS *float64 `json:"output_validation_ms"`
		SerializationMS    *float64 `json:"serialization_ms"`
		ExecutionMS        *float64 `json:"execution_ms"`
		CleanupMS          *float64 `json:"cleanup_ms"`
		TotalMS            *float64 `json:"total_ms"`
	} `json:"metrics"`
	Resources struct {
		Memory   *engine.Memory `json:"memory"`
		FuelUsed *int64         `json:"fuel_used,omitempty"`
	} `json:"resources"`
}

// oracle is out as encoding/json wrote it before, without HTML escaping
// and the final newline.
func oracle(t *testing.T, out *run.BatchOutcome) []byte {
	t.Helper()
	ms := func(d *time.Duration) *float64 {
		if d == nil {
			return nil
		}
		v := float64(*d) / float64(time.Millisecond)
		return &v
	}
	doc := seedBatch{RequestID: out.RequestID, SuccessCount: out.Succeeded, FailedCount: out.Failed, ServerProcessingMS: ms(out.Processing)}
	if out.Items != nil {
		doc.Results = []seedItem{}
	}
	for _, r := range out.Items {
		it := seedItem{CorrelationID: r.CorrelationID, ToolCode: r.ToolCode, ContractVersion: r.ContractVersion,
			ImplementationVersion: r.ImplementationVersion, SchemaFingerprint: r.SchemaFingerprint,
			Status: "error", ExecutionID: r.ExecutionID, Result: r.Result, Error: r.Error}
		if r.Succeeded {
			it.Status = "success"
		}
		m := &it.Metrics
		m.QueueWaitMS, m.StartupMS, m.InputValidationMS = ms(r.Metrics.QueueWait), ms(r.Metrics.Startup), ms(r.Metrics.InputValidation)
		m.ComputeMS, m.OutputValidationMS, m.SerializationMS = ms(r.Metrics.Compute), ms(r.Metrics.OutputValidation), ms(r.Metrics.Serialization)
		m.ExecutionMS, m.CleanupMS, m.TotalMS = ms(r.Metrics.Execution), ms(r.Metrics.Cleanup), ms(r.Metrics.Total)
		it.Resources.Memory, it.Resources.FuelUsed = r.Resources.Memory, r.Resources.FuelUsed
		doc.Results = append(doc.Results, it)
	}
	return stdJSON(t, doc)
}

// stdJSON is v as encoding/json writes it without HTML escaping, less the
// final newline.
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

func dur(d time.Duration) *time.Duration { return &d }
func i64(v int64) *int64                 { return &v }

// TestAppendSeedBatch: the hand-written compute answer is the one
// encoding/json wrote for the executor's batch result, byte for byte,
// over successes and failures, null and present metrics, durations from
// a nanosecond to hours, strings that need escaping, memory reports with
// and without a peak, and results with whitespace to compact.
func TestAppendSeedBatch(t *testing.T) {
	odd := "a\"b\\c\n\t\x01\x7f<>&é\u2028\u2029\xff"
	durations := []time.Duration{0, 1, 999, time.Microsecond, 1234567, time.Millisecond / 3, time.Millisecond,
		2*time.Millisecond + 1, 123456789012, 3 * time.Hour, -time.Nanosecond, -2 * time.Millisecond, math.MaxInt64}
	var items []run.ItemOutcome
	for i, d := range durations {
		items = append(items, run.ItemOutcome{
			CorrelationID: "c-1", ToolCode: "hash", ContractVersion: "1.0.0", ImplementationVersion: "1.2.3",
			SchemaFingerprint: "0123456789abcdef", Succeeded: true, ExecutionID: "e1",
			Result:  json.RawMessage(`{ "digest" : "ab\u00e9",` + "\n\t" + `"n":[1, 2.50,  {"x":"<&>"}] }`),
			Metrics: run.Metrics{QueueWait: dur(d), Startup: dur(-d), Execution: dur(d / 3), Total: dur(time.Duration(i))},
			Resources: run.Resources{Memory: &engine.Memory{Mode: engine.MemoryWASMHard, LimitBytes: 1 << 30, PeakBytes: i64(65536)},
				FuelUsed: i64(int64(i) * 1000)},
		})
	}
	all := run.Metrics{QueueWait: dur(1), Startup: dur(2), InputValidation: dur(3), Compute: dur(4), OutputValidation: dur(5),
		Serialization: dur(6), Execution: dur(7), Cleanup: dur(8), Total: dur(9)}
	items = append(items,
		run.ItemOutcome{CorrelationID: odd, ToolCode: odd, ContractVersion: "",
			Error: toolerr.New(toolerr.InvalidParameters, toolerr.NewIssue("required", "text", odd)), Metrics: all},
		run.ItemOutcome{CorrelationID: "c-3", ExecutionID: "e3",
			Error:     &toolerr.Error{Code: "tool_failed", Message: odd, Issues: nil},
			Resources: run.Resources{Memory: &engine.Memory{Mode: "process_tree_observed"}}},
		run.ItemOutcome{Succeeded: true, Result: json.RawMessage(`"x"`),
			Resources: run.Resources{Memory: &engine.Memory{Mode: odd, LimitBytes: -1, PeakBytes: i64(0)}}},
	)
	for _, out := range []*run.BatchOutcome{
		{RequestID: "r-1", Items: items, Succeeded: 3, Failed: 2, Processing: dur(12500 * time.Microsecond)},
		{RequestID: odd, Items: items[:1]},
		{RequestID: "", Items: []run.ItemOutcome{}},
		{},
	} {
		got, err := appendSeedBatch([]byte("prefix:"), out)
		if err != nil {
			t.Fatal(err)
		}
		want := append([]byte("prefix:"), oracle(t, out)...)
		if !bytes.Equal(got, want) {
			t.Errorf("appendSeedBatch differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
	// encoding/json refuses an invalid result; so does appendSeedBatch.
	bad := &run.BatchOutcome{Items: []run.ItemOutcome{{Result: json.RawMessage(`{"a":`)}}}
	if _, err := appendSeedBatch(nil, bad); err == nil {
		t.Errorf("appendSeedBatch accepted %+v", bad)
	}
}

// TestAppendFloat: every float64 is written as encoding/json writes it,
// in both notations, and a NaN is refused as it refuses it.
func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, 1, 0.125, 1.0 / 3, 123456.789, 1e-6, 9.99e-7, 1e-7, 1.5e-12, 1e20, 1e21, 1.234e25, -0.5, -2e-9,
		math.SmallestNonzeroFloat64, math.MaxFloat64} {
		got, err := appendFloat(nil, f)
		if want := stdJSON(t, f); err != nil || !bytes.Equal(got, want) {
			t.Errorf("appendFloat(%v) = %s, %v, want %s", f, got, err, want)
		}
	}
	if _, err := appendFloat(nil, math.NaN()); err == nil {
		t.Error("appendFloat accepted a NaN")
	}
}

// BenchmarkAppendSeedBatch measures the compute answer of a batch of four
// successes with every metric, a memory report and fuel, as a bundled
// WASM tool's items are answered.
func BenchmarkAppendSeedBatch(b *testing.B) {
	item := run.ItemOutcome{
		CorrelationID: "c-0", ToolCode: "hash", ContractVersion: "1.0.0", ImplementationVersion: "1.2.3",
		SchemaFingerprint: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Succeeded: true,
		ExecutionID: "3171bac91ca4b5841778f16335949d62",
		Result:      json.RawMessage(`{"algorithm":"sha256","digest":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}`),
		Metrics: run.Metrics{QueueWait: dur(43561), Startup: dur(261000), InputValidation: dur(30000), Compute: dur(1920000),
			OutputValidation: dur(12000), Serialization: dur(1000), Execution: dur(2404047), Cleanup: dur(1), Total: dur(2448130)},
		Resources: run.Resources{Memory: &engine.Memory{Mode: engine.MemoryWASMHard, LimitBytes: 1 << 30, PeakBytes: i64(1 << 21)},
			FuelUsed: i64(123456)},
	}
	out := &run.BatchOutcome{RequestID: "bench-1", Items: []run.ItemOutcome{item, item, item, item}, Succeeded: 4,
		Processing: dur(3123456)}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendSeedBatch(buf[:0], out); err != nil {
			b.Fatal(err)
		}
	}
}
