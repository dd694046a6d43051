package contracts

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/internal/toolerr"
)

// stdJSON is what the run route answered with before AppendJSON:
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

// TestRunAppendJSON: the hand-written encoding of a run document is
// encoding/json's, byte for byte: successes with results to compact,
// failures with errors, strings that need escaping, and the documents it
// hands to encoding/json whole (a job, files, a result of another type).
func TestRunAppendJSON(t *testing.T) {
	odd := "a\"b\\c\n\t\x01\x7f<>&é\u2028\u2029\xff"
	result := json.RawMessage(`{ "digest" : "ab\u00e9<&>",` + "\n\t" + `"n":[1, 2.50,  {"x":"<&>"}] }`)
	size := int64(12)
	for _, r := range []Run{
		{ID: "0123456789abcdef0123456789abcdef", Tool: "hash", Status: RunSucceeded, Result: json.RawMessage(`{"digest":"d7a8"}`)},
		{ID: "e1", Tool: "hash", Status: RunSucceeded, Result: result},
		{ID: odd, Tool: odd, Status: RunStatus(odd), Result: json.RawMessage(`"x"`)},
		{ID: "e2", Tool: "hash", Status: RunFailed, Error: toolerr.New(toolerr.ExecutionTimeout)},
		{ID: "e3", Tool: "t", Status: RunFailed, Error: &toolerr.Error{Code: "tool_failed", Message: odd,
			Issues: []toolerr.Issue{toolerr.NewIssue("required", "text", odd)}, IssueCount: 1}},
		{ID: "e4", Tool: "t", Status: RunSucceeded, Result: map[string]any{"b": 1, "a": "<>"}},
		{ID: "e5", Tool: "t", Status: RunSucceeded, Result: json.RawMessage(`null`)},
		{ID: "e6", Tool: "t", Status: RunQueued, Job: &JobLink{ID: "j", Location: JobLocation("j")}},
		{ID: "e7", Tool: "t", Status: RunSucceeded, Files: []File{{Name: "a.pdf", URL: "/x?a=1&b=<", Expires: "2026-12-02T00:00:00Z", Bytes: &size}}},
		{},
	} {
		got, err := r.AppendJSON([]byte("prefix:"))
		if err != nil {
			t.Fatalf("AppendJSON(%+v) = %v", r, err)
		}
		want := append([]byte("prefix:"), stdJSON(t, r)...)
		if !bytes.Equal(got, want) {
			t.Errorf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
	// encoding/json refuses an invalid or empty raw result; so does
	// AppendJSON.
	for _, bad := range []Run{
		{Result: json.RawMessage(`{"a":`)},
		{Result: json.RawMessage(``)},
	} {
		if _, err := bad.AppendJSON(nil); err == nil {
			t.Errorf("AppendJSON accepted %+v", bad)
		}
	}
}
