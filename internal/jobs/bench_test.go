package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/store"
)

// BenchmarkJobRoundTrip is one job as a caller meets it, on SQLite: the
// submission, River's fetch, a handler that writes one output file, the
// outcome recorded (and kept beside the job until it is), and the final
// event to a subscriber. ns/op is the whole round trip; River polls for
// tickets every 2 ms here, so that the poll does not hide the work.
func BenchmarkJobRoundTrip(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "toolhost.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	write := jobs.Handler{Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
		if err := os.WriteFile(filepath.Join(run.OutDir, "out.txt"), []byte("ok\n"), 0o600); err != nil {
			return nil, err
		}
		return json.RawMessage(`{"ok":true}`), nil
	}}
	svc, err := jobs.Open(ctx, jobs.Config{Store: st, DataDir: dir, Handlers: map[string]jobs.Handler{"write": write},
		SigningKey: bytes.Repeat([]byte("k"), 32), PollInterval: 2 * time.Millisecond, SweepInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close(ctx)
	b.ResetTimer()
	for b.Loop() {
		j, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "write", Input: json.RawMessage(`{}`)})
		if err != nil {
			b.Fatal(err)
		}
		events, err := svc.Subscribe(ctx, j.ID, alice)
		if err != nil {
			b.Fatal(err)
		}
		final := jobs.State("")
		for ev := range events {
			if ev.Kind == jobs.EventState {
				final = ev.State
			}
		}
		if final != jobs.Succeeded {
			b.Fatalf("job %s ended %q", j.ID, final)
		}
	}
}
