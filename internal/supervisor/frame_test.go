//go:build linux

package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/toolerr"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := jobFrame{Frame: kindJob, ExecutionID: "x", Parameters: json.RawMessage(`{"operation":"run","text":"<a & b>"}`)}
	if err := writeFrame(&buf, in); err != nil {
		t.Fatal(err)
	}
	payload, err := readFrame(&buf, MaxJobFrameBytes)
	if err != nil {
		t.Fatal(err)
	}
	var out jobFrame
	if err := decodeFrame(payload, kindJob, &out); err != nil {
		t.Fatal(err)
	}
	// Raw members go out byte for byte: no HTML escaping.
	if string(out.Parameters) != string(in.Parameters) || out.ExecutionID != "x" {
		t.Errorf("decoded %+v", out)
	}
}

func TestFrameRefusals(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		limit int
		want  error
	}{
		{name: "nothing", input: nil, limit: 100, want: io.EOF},
		{name: "short length", input: []byte{0, 0}, limit: 100, want: errFrameTruncated},
		{name: "empty", input: []byte{0, 0, 0, 0}, limit: 100, want: errFrameEmpty},
		{name: "over the bound", input: frameBytes(strings.Repeat(" ", 101)), limit: 100, want: errFrameTooLarge},
		{name: "huge length", input: []byte{0xff, 0xff, 0xff, 0xff}, limit: 100, want: errFrameTooLarge},
		{name: "truncated payload", input: frameBytes(`{"frame":"ready"}`)[:10], limit: 100, want: errFrameTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := readFrame(bytes.NewReader(tt.input), tt.limit); !errors.Is(err, tt.want) {
				t.Errorf("readFrame = %v, want %v", err, tt.want)
			}
		})
	}
	for _, payload := range []string{
		`{"frame":"ready","protocol":2,"worker_id":"x","pid":1,"pgid":1,"start_time":1,"extra":0}`,
		`{"frame":"ready","frame":"ready"}`,
		`{"frame":"result"}`,
		`{"frame":"ready"} {}`,
		`[]`,
		"{\"frame\":\"ready\",\"worker_id\":\"\xff\"}",
	} {
		var r readyFrame
		if err := decodeFrame([]byte(payload), kindReady, &r); !errors.Is(err, errFrameMalformed) {
			t.Errorf("decodeFrame(%q) = %v, want errFrameMalformed", payload, err)
		}
	}
}

func FuzzFrame(f *testing.F) {
	f.Add(frameBytes(`{"frame":"ready","protocol":2,"worker_id":"x","pid":1,"pgid":1,"start_time":1}`))
	f.Add(frameBytes(`{"frame":"result","execution_id":"x","result":{"a":1},"phases_ns":{}}`))
	f.Add([]byte{0, 0, 0, 1, '{'})
	f.Fuzz(func(t *testing.T, data []byte) {
		payload, err := readFrame(bytes.NewReader(data), 1<<10)
		if err != nil {
			return
		}
		var r resultFrame
		if decodeFrame(payload, kindResult, &r) == nil && r.Frame != kindResult {
			t.Fatalf("accepted a %q frame as a result", r.Frame)
		}
	})
}

func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000000 321 18446744073709551615"
	p, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{PID: 4242, PPID: 1, PGID: 4242, SID: 4242, State: 'S', Flags: 4194560, StartTime: 987654, RSSPages: 321}
	if p != want {
		t.Errorf("parseStat = %+v, want %+v", p, want)
	}
	for _, bad := range []string{"", "12 (x", "x (y) S 1 2 3", "1 (y) S 1 2 3 4"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

func TestTreeMembership(t *testing.T) {
	root := identity{PID: 100, StartTime: 1000}
	tr := newTree(root)
	procs := []procStat{
		{PID: 1, PPID: 0, PGID: 1, SID: 1, State: 'S', StartTime: 1},
		{PID: 50, PPID: 1, PGID: 50, SID: 50, State: 'S', StartTime: 500},       // older than the worker
		{PID: 100, PPID: 9, PGID: 100, SID: 100, State: 'S', StartTime: 1000},   // the worker
		{PID: 101, PPID: 100, PGID: 100, SID: 100, State: 'S', StartTime: 1001}, // child
		{PID: 102, PPID: 101, PGID: 102, SID: 102, State: 'S', StartTime: 1002}, // re-setsid grandchild
		{PID: 103, PPID: 1, PGID: 100, SID: 100, State: 'S', StartTime: 1003},   // double-forked, same group
		{PID: 104, PPID: 102, PGID: 104, SID: 104, State: 'Z', StartTime: 1004}, // a zombie below
		{PID: 200, PPID: 1, PGID: 200, SID: 200, State: 'S', StartTime: 2000},   // a stranger
		{PID: 201, PPID: 50, PGID: 201, SID: 201, State: 'S', StartTime: 2001},  // the stranger's child
	}
	live := tr.update(procs)
	var got []int
	for _, p := range live {
		got = append(got, p.PID)
	}
	if want := []int{100, 101, 102, 103}; !equalInts(got, want) {
		t.Errorf("live members %v, want %v", got, want)
	}
	// 102 detached (its parent died, it went to init): still known.
	procs = []procStat{
		{PID: 102, PPID: 1, PGID: 102, SID: 102, State: 'S', StartTime: 1002},
		{PID: 105, PPID: 102, PGID: 105, SID: 105, State: 'S', StartTime: 1005},
		// 101 reused by a stranger: a different start time.
		{PID: 101, PPID: 1, PGID: 101, SID: 101, State: 'S', StartTime: 3000},
	}
	live = tr.update(procs)
	got = got[:0]
	for _, p := range live {
		got = append(got, p.PID)
	}
	if want := []int{102, 105}; !equalInts(got, want) {
		t.Errorf("live members %v, want %v", got, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSanitize(t *testing.T) {
	w := &worker{log: discard()}
	long := strings.Repeat("é", 400)
	in := &toolerr.Error{Code: toolerr.InvalidParameters, Retryable: true, Message: long,
		Issues: []toolerr.Issue{{Code: "Bad Code!", Path: []string{"a b", "ok"}}}, IssueCount: 7}
	out, ok := w.sanitize(in)
	if !ok || out.Code != toolerr.InvalidParameters || !out.Retryable || len(out.Message) > maxMessageBytes ||
		out.Issues[0].Code != "invalid" || out.Issues[0].Path[0] != toolerr.RedactedSegment || out.IssueCount != 7 {
		t.Errorf("sanitize = %+v", out)
	}
	if out, _ := w.sanitize(&toolerr.Error{Code: toolerr.WorkerCrashed}); out.Code != toolerr.ExecutionFailed {
		t.Errorf("a platform-only code became %s", out.Code)
	}
	if _, ok := w.sanitize(&toolerr.Error{Code: "made_up"}); ok {
		t.Error("an unknown code was accepted")
	}
}
