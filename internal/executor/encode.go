package executor

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// AppendJSON appends the batch result's JSON to b: byte for byte what
// encoding/json writes for it with HTML escaping off (json.Encoder with
// SetEscapeHTML(false), less its final newline), which the compute route
// answered with before; TestAppendJSON holds the two to the same bytes.
// It is written by hand because the answer of every compute batch is
// encoded with it: the reflection of encoding/json cost more than the
// rest of the route's encoding. The parts that are rare or nested (an
// error, a memory report, a string that needs escaping) are still
// encoded by encoding/json.
func (r *BatchResult) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"request_id":`...)
	b, err := appendString(b, r.RequestID)
	if err != nil {
		return b, err
	}
	b = append(b, `,"results":`...)
	if r.Results == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Results {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = r.Results[i].appendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"success_count":`...)
	b = strconv.AppendInt(b, int64(r.SuccessCount), 10)
	b = append(b, `,"failed_count":`...)
	b = strconv.AppendInt(b, int64(r.FailedCount), 10)
	b = append(b, `,"server_processing_ms":`...)
	if b, err = appendFloatPtr(b, r.ServerProcessingMS); err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

func (r *ItemResult) appendJSON(b []byte) ([]byte, error) {
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
		{`,"status":`, r.Status},
	} {
		b = append(b, f.name...)
		if b, err = appendString(b, f.value); err != nil {
			return b, err
		}
	}
	if r.ExecutionID != "" {
		b = append(b, `,"execution_id":`...)
		if b, err = appendString(b, r.ExecutionID); err != nil {
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
		if b, err = appendStd(b, r.Error); err != nil {
			return b, err
		}
	}
	m := &r.Metrics
	for _, f := range [...]struct {
		name  string
		value *float64
	}{
		{`,"metrics":{"queue_wait_ms":`, m.QueueWaitMS},
		{`,"startup_ms":`, m.StartupMS},
		{`,"input_validation_ms":`, m.InputValidationMS},
		{`,"compute_ms":`, m.ComputeMS},
		{`,"output_validation_ms":`, m.OutputValidationMS},
		{`,"serialization_ms":`, m.SerializationMS},
		{`,"execution_ms":`, m.ExecutionMS},
		{`,"cleanup_ms":`, m.CleanupMS},
		{`,"total_ms":`, m.TotalMS},
	} {
		b = append(b, f.name...)
		if b, err = appendFloatPtr(b, f.value); err != nil {
			return b, err
		}
	}
	b = append(b, `},"resources":{"memory":`...)
	if r.Resources.Memory == nil {
		b = append(b, "null"...)
	} else if b, err = appendStd(b, r.Resources.Memory); err != nil {
		return b, err
	}
	if r.Resources.FuelUsed != nil {
		b = append(b, `,"fuel_used":`...)
		b = strconv.AppendInt(b, *r.Resources.FuelUsed, 10)
	}
	return append(b, "}}"...), nil
}

// appendString appends s as a JSON string: directly when it is printable
// ASCII without a quote or a backslash (identifiers, versions, hex), else
// as encoding/json escapes it.
func appendString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return appendStd(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// appendFloatPtr appends a nil as null and a float64 as encoding/json
// writes it (the shortest repr, exponent form below 1e-6 and from 1e21,
// "e-07" written "e-7").
func appendFloatPtr(b []byte, f *float64) ([]byte, error) {
	if f == nil {
		return append(b, "null"...), nil
	}
	v := *f
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return appendStd(b, v) // encoding/json's own error
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

// appendStd appends v as encoding/json writes it without HTML escaping.
func appendStd(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
