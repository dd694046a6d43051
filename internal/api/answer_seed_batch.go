// The seed-000 compute answer: the document a batch that ran is answered
// with (request_id, one result per item with its pins, status, result or
// error, metrics in milliseconds with null for what was not observed,
// resources; success_count, failed_count, server_processing_ms), written
// from the application layer's plain run.BatchOutcome.

package api

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/toolhost/toolhost/internal/wire"

	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/run"
)

// The values of a compute result's "status".
const (
	itemSuccess = "success"
	itemError   = "error"
)

// appendSeedBatch appends out's seed-000 compute answer to b: byte for
// byte what encoding/json wrote for the executor's batch result with HTML
// escaping off (json.Encoder with SetEscapeHTML(false), less its final
// newline), which the compute route answered with before;
// TestAppendSeedBatch holds the two to the same bytes. It is written by
// hand because every compute batch is answered with it: the reflection of
// encoding/json cost more than the rest of the route's encoding. The parts
// that are rare or nested (an error, a string that needs escaping) are
// still encoded by encoding/json. It fails only for a result that is not
// valid JSON, as encoding/json would.
func appendSeedBatch(b []byte, out *run.BatchOutcome) ([]byte, error) {
	b = append(b, `{"request_id":`...)
	b, err := wire.AppendString(b, out.RequestID)
	if err != nil {
		return b, err
	}
	b = append(b, `,"results":`...)
	if out.Items == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range out.Items {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendSeedItem(b, &out.Items[i]); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"success_count":`...)
	b = strconv.AppendInt(b, int64(out.Succeeded), 10)
	b = append(b, `,"failed_count":`...)
	b = strconv.AppendInt(b, int64(out.Failed), 10)
	b = append(b, `,"server_processing_ms":`...)
	if b, err = appendMillis(b, out.Processing); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendSeedItem appends one item's result: its pins, its status, then
// execution_id, result and error only when it has them, the nine metrics
// always (null when not observed), and its resources (memory null when
// none was reported, fuel_used only when it was).
func appendSeedItem(b []byte, r *run.ItemOutcome) ([]byte, error) {
	status := itemError
	if r.Succeeded {
		status = itemSuccess
	}
	var err error
	for _, f := range [...]struct {
		name  string
		value string
	}{
		{`{"correlation_id":`, r.CorrelationID},
		{`,"tool_code":`, r.ToolCode},
		{`,"contract_version":`, r.ContractVersion},
		{`,"implementation_version":`, r.ImplementationVersion},
		{`,"schema_fingerprint":`, r.SchemaFingerprint},
		{`,"status":`, status},
	} {
		b = append(b, f.name...)
		if b, err = wire.AppendString(b, f.value); err != nil {
			return b, err
		}
	}
	if r.ExecutionID != "" {
		b = append(b, `,"execution_id":`...)
		if b, err = wire.AppendString(b, r.ExecutionID); err != nil {
			return b, err
		}
	}
	if len(r.Result) > 0 {
		b = append(b, `,"result":`...)
		// encoding/json compacts a RawMessage (and refuses an invalid one).
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, r.Result); err != nil {
			return b, err
		}
		b = buf.Bytes()
	}
	if r.Error != nil {
		b = append(b, `,"error":`...)
		if b, err = wire.AppendJSON(b, r.Error); err != nil {
			return b, err
		}
	}
	m := &r.Metrics
	for _, f := range [...]struct {
		name  string
		value *time.Duration
	}{
		{`,"metrics":{"queue_wait_ms":`, m.QueueWait},
		{`,"startup_ms":`, m.Startup},
		{`,"input_validation_ms":`, m.InputValidation},
		{`,"compute_ms":`, m.Compute},
		{`,"output_validation_ms":`, m.OutputValidation},
		{`,"serialization_ms":`, m.Serialization},
		{`,"execution_ms":`, m.Execution},
		{`,"cleanup_ms":`, m.Cleanup},
		{`,"total_ms":`, m.Total},
	} {
		b = append(b, f.name...)
		if b, err = appendMillis(b, f.value); err != nil {
			return b, err
		}
	}
	b = append(b, `},"resources":{"memory":`...)
	if b, err = appendMemory(b, r.Resources.Memory); err != nil {
		return b, err
	}
	if r.Resources.FuelUsed != nil {
		b = append(b, `,"fuel_used":`...)
		b = strconv.AppendInt(b, *r.Resources.FuelUsed, 10)
	}
	return append(b, "}}"...), nil
}

// appendMemory appends a memory report (mode, limit_bytes, peak_bytes
// null when nothing was observed), or null for none.
func appendMemory(b []byte, m *engine.Memory) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"mode":`...)
	b, err := wire.AppendString(b, m.Mode)
	if err != nil {
		return b, err
	}
	b = append(b, `,"limit_bytes":`...)
	b = strconv.AppendInt(b, m.LimitBytes, 10)
	b = append(b, `,"peak_bytes":`...)
	if m.PeakBytes == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *m.PeakBytes, 10)
	}
	return append(b, '}'), nil
}

// appendMillis appends a measured duration in float milliseconds, or null
// when it was not observed.
func appendMillis(b []byte, d *time.Duration) ([]byte, error) {
	if d == nil {
		return append(b, "null"...), nil
	}
	return appendFloat(b, float64(*d)/float64(time.Millisecond))
}

// appendFloat appends v as encoding/json writes a float64 (the shortest
// repr, exponent form below 1e-6 and from 1e21, "e-07" written "e-7").
func appendFloat(b []byte, v float64) ([]byte, error) {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return wire.AppendJSON(b, v) // encoding/json's own error
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
