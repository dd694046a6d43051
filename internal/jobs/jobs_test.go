package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/testkit/storetest"
	"github.com/toolhost/toolhost/internal/toolerr"
)

const (
	alice = "user:alice"
	bob   = "user:bob"
)

// A job runs, its output is a file its owner can download and nobody else
// can; after its expiry it is refused, and the sweeper removes it from disk
// and from the database.
func TestSubmitRunDownloadExpire(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{"pdf": stamp()}, nil)
		pdf := pdfFixture(t)
		ctx := context.Background()

		j := submit(t, svc, alice, "pdf", upload("doc.pdf", pdf))
		if j.Owner != alice || j.Type != "pdf" || len(j.Files) != 1 || j.Files[0].MediaType != sniff.PDF || j.Files[0].Role != jobs.Input {
			t.Fatalf("submitted job: %+v", j)
		}
		done := waitState(t, svc, j.ID, alice, jobs.Succeeded)
		if done.Attempts != 1 || done.StartedAt == nil || done.FinishedAt == nil || done.ExpiresAt == nil || done.Error != nil {
			t.Fatalf("succeeded job: %+v", done)
		}
		if string(done.Result) != `{"files":["stamped-doc.pdf"]}` {
			t.Fatalf("result %s", done.Result)
		}
		if done.Progress != (jobs.Progress{Done: 1, Total: 1, Message: "stamped doc.pdf"}) {
			t.Fatalf("final progress %+v", done.Progress)
		}
		var out *jobs.File
		for i, f := range done.Files {
			if f.Role == jobs.Output {
				out = &done.Files[i]
			}
		}
		if out == nil || out.Name != "stamped-doc.pdf" || out.MediaType != sniff.PDF || out.SizeBytes != int64(len(pdf)+len(stampMark)) {
			t.Fatalf("output file: %+v", out)
		}
		if got := readFile(t, svc, j.ID, out.Name, alice); !bytes.Equal(got, append(pdf, stampMark...)) {
			t.Fatalf("downloaded %d bytes, want the stamped PDF", len(got))
		}

		// Another owner sees neither the job nor its files.
		if _, err := svc.Get(ctx, j.ID, bob); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("Get by another owner: %v", err)
		}
		if _, err := svc.OpenFile(ctx, j.ID, out.Name, bob); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("OpenFile by another owner: %v", err)
		}
		if _, err := svc.OpenFile(ctx, j.ID, out.Name, ""); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("OpenFile without an owner: %v", err)
		}
		if _, err := svc.OpenFile(ctx, j.ID, "missing.pdf", alice); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("OpenFile of a missing file: %v", err)
		}

		// Past the expiry, the owner is refused too, before and after the sweep.
		e.clock.Advance(time.Hour)
		if _, err := svc.OpenFile(ctx, j.ID, out.Name, alice); !errors.Is(err, jobs.ErrExpired) {
			t.Fatalf("OpenFile after expiry: %v", err)
		}
		if _, _, err := svc.SignedURL(ctx, j.ID, out.Name, alice, time.Minute); !errors.Is(err, jobs.ErrExpired) {
			t.Fatalf("SignedURL after expiry: %v", err)
		}
		if err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.OpenFile(ctx, j.ID, out.Name, alice); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("OpenFile after the sweep: %v", err)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "jobs", j.ID)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the job's directory is still there after the sweep: %v", err)
		}
		swept, err := svc.Get(ctx, j.ID, alice)
		if err != nil || len(swept.Files) != 0 || swept.State != jobs.Succeeded {
			t.Fatalf("after the sweep: %+v, %v; want the job without files", swept, err)
		}
	})
}

// The periodic sweeper removes expired files on its own.
func TestSweeperRuns(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{"pdf": stamp()}, func(c *jobs.Config) {
			c.SweepInterval = 20 * time.Millisecond
		})
		j := submit(t, svc, alice, "pdf", upload("doc.pdf", pdfFixture(t)))
		waitState(t, svc, j.ID, alice, jobs.Succeeded)
		readFile(t, svc, j.ID, "stamped-doc.pdf", alice)
		e.clock.Advance(2 * time.Hour)
		deadline := time.Now().Add(waitFor)
		for {
			_, err := svc.OpenFile(context.Background(), j.ID, "stamped-doc.pdf", alice)
			_, statErr := os.Stat(filepath.Join(e.dir, "jobs", j.ID))
			if errors.Is(err, jobs.ErrNotFound) && errors.Is(statErr, os.ErrNotExist) {
				break
			}
			if !errors.Is(err, jobs.ErrExpired) && !errors.Is(err, jobs.ErrNotFound) {
				t.Fatalf("OpenFile after expiry: %v", err)
			}
			if time.Now().After(deadline) {
				t.Fatal("the sweeper did not remove the expired files")
			}
			time.Sleep(10 * time.Millisecond)
		}

		// Past the job retention the job row goes too.
		e.clock.Advance(jobs.DefaultJobRetention)
		for {
			_, err := svc.Get(context.Background(), j.ID, alice)
			if errors.Is(err, jobs.ErrNotFound) {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Fatalf("the job is still there after its retention: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestSignedURL(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{"pdf": stamp()}, nil)
		ctx := context.Background()
		pdf := pdfFixture(t)
		j := submit(t, svc, alice, "pdf", upload("a doc.pdf", pdf))
		waitState(t, svc, j.ID, alice, jobs.Succeeded)
		name := "stamped-a doc.pdf"

		if _, _, err := svc.SignedURL(ctx, j.ID, name, bob, time.Minute); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("SignedURL for another owner: %v", err)
		}
		raw, until, err := svc.SignedURL(ctx, j.ID, name, alice, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if want := e.clock.Now().Add(10 * time.Minute); !until.Equal(want) {
			t.Fatalf("signed until %v, want %v", until, want)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		wantPath := "/api/v1/jobs/" + j.ID + "/files/" + name
		if u.Path != wantPath {
			t.Fatalf("signed URL path %q, want %q", u.Path, wantPath)
		}
		expires, sig := u.Query().Get("expires"), u.Query().Get("sig")

		d, err := svc.OpenSigned(ctx, j.ID, name, expires, sig)
		if err != nil {
			t.Fatalf("OpenSigned: %v", err)
		}
		got, _ := io.ReadAll(d.Content)
		d.Content.Close()
		if !bytes.Equal(got, append(pdf, stampMark...)) {
			t.Fatal("the signed download is not the output")
		}

		flip := []byte(sig)
		flip[0] ^= 1
		tampered := []struct {
			name                   string
			id, file, expires, sig string
		}{
			{"signature", j.ID, name, expires, string(flip)},
			{"later expiry", j.ID, name, expires + "0", sig},
			{"padded expiry", j.ID, name, "0" + expires, sig},
			{"other file", j.ID, "a doc.pdf", expires, sig},
			{"other job", "job_aaaaaaaaaaaaaaaaaaaaaaaaaa", name, expires, sig},
			{"empty signature", j.ID, name, expires, ""},
		}
		for _, tt := range tampered {
			t.Run(tt.name, func(t *testing.T) {
				if err := svc.VerifySigned(tt.id, tt.file, tt.expires, tt.sig); !errors.Is(err, jobs.ErrSignature) {
					t.Fatalf("VerifySigned: %v, want ErrSignature", err)
				}
				if _, err := svc.OpenSigned(ctx, tt.id, tt.file, tt.expires, tt.sig); !errors.Is(err, jobs.ErrSignature) {
					t.Fatalf("OpenSigned: %v, want ErrSignature", err)
				}
			})
		}

		// A URL is never valid past the file's own expiry, and expires.
		_, until, err = svc.SignedURL(ctx, j.ID, name, alice, 48*time.Hour)
		if err != nil || until.After(e.clock.Now().Add(time.Hour)) {
			t.Fatalf("a long signed URL lasts until %v (%v), past the file's expiry", until, err)
		}
		e.clock.Advance(10 * time.Minute)
		if err := svc.VerifySigned(j.ID, name, expires, sig); !errors.Is(err, jobs.ErrExpired) {
			t.Fatalf("VerifySigned after expiry: %v", err)
		}
		if _, err := svc.OpenSigned(ctx, j.ID, name, expires, sig); !errors.Is(err, jobs.ErrExpired) {
			t.Fatalf("OpenSigned after expiry: %v", err)
		}
	})
}

// A subscriber sees queued, running, progress and succeeded in order.
func TestSubscribe(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		block := newBlocker()
		svc := e.open(t, map[string]jobs.Handler{"pdf": stamp(), "hold": block.handler(false)}, func(c *jobs.Config) {
			c.MaxWorkers = 1
		})
		ctx := context.Background()
		// The one worker is busy, so the next job stays queued.
		holder := submit(t, svc, alice, "hold")
		block.wait(t)
		j := submit(t, svc, alice, "pdf", upload("one.pdf", pdfFixture(t)), upload("two.pdf", pdfFixture(t)))

		if _, err := svc.Subscribe(ctx, j.ID, bob); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("Subscribe by another owner: %v", err)
		}
		events, err := svc.Subscribe(ctx, j.ID, alice)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Cancel(ctx, holder.ID, alice); err != nil {
			t.Fatal(err)
		}
		var (
			states   []jobs.State
			progress []jobs.Progress
			last     int64
		)
		timeout := time.After(waitFor)
		for done := false; !done; {
			select {
			case ev, ok := <-events:
				if !ok {
					done = true
					break
				}
				if ev.Version < last {
					t.Fatalf("event version %d after %d", ev.Version, last)
				}
				last = ev.Version
				switch ev.Kind {
				case jobs.EventState:
					if ev.Job == nil || ev.Job.ID != j.ID || ev.Job.State != ev.State {
						t.Fatalf("state event %+v", ev)
					}
					states = append(states, ev.State)
				case jobs.EventProgress:
					if len(states) == 0 || states[len(states)-1] != jobs.Running || ev.Progress == nil {
						t.Fatalf("progress event %+v after states %v", ev, states)
					}
					progress = append(progress, *ev.Progress)
				}
			case <-timeout:
				t.Fatalf("the stream did not end; states so far %v", states)
			}
		}
		want := []jobs.State{jobs.Queued, jobs.Running, jobs.Succeeded}
		if len(states) != len(want) || states[0] != want[0] || states[1] != want[1] || states[2] != want[2] {
			t.Fatalf("states %v, want %v", states, want)
		}
		if len(progress) == 0 || progress[len(progress)-1].Done != 2 || progress[len(progress)-1].Total != 2 {
			t.Fatalf("progress %+v, want reports ending at 2 of 2", progress)
		}

		// A subscription to a finished job gets its state and ends.
		events, err = svc.Subscribe(ctx, j.ID, alice)
		if err != nil {
			t.Fatal(err)
		}
		if ev := <-events; ev.State != jobs.Succeeded {
			t.Fatalf("first event of a finished job: %+v", ev)
		}
		if _, ok := <-events; ok {
			t.Fatal("the stream of a finished job did not end")
		}

		// Ending the context ends the stream.
		other := submit(t, svc, alice, "hold")
		block.wait(t)
		sctx, cancel := context.WithCancel(ctx)
		events, err = svc.Subscribe(sctx, other.ID, alice)
		if err != nil {
			t.Fatal(err)
		}
		<-events
		cancel()
		for range events {
		}
		if _, err := svc.Cancel(ctx, other.ID, alice); err != nil {
			t.Fatal(err)
		}
		waitState(t, svc, other.ID, alice, jobs.Cancelled)
	})
}

func TestRetry(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{"flaky": flaky()}, nil)
		ctx := context.Background()
		j := submit(t, svc, alice, "flaky", upload("in.pdf", pdfFixture(t)))
		failed := waitState(t, svc, j.ID, alice, jobs.Failed)
		if failed.Error == nil || failed.Error.Code != toolerr.ExecutionFailed || !failed.Error.Retryable ||
			failed.Error.Message != "the engine hiccuped" || failed.Attempts != 1 || failed.Result != nil {
			t.Fatalf("failed job: %+v (error %+v)", failed, failed.Error)
		}
		b, _ := json.Marshal(failed.Error)
		if string(b) != `{"code":"execution_failed","retryable":true,"message":"the engine hiccuped","issues":[],"issue_count":0}` {
			t.Fatalf("error JSON %s", b)
		}

		if _, err := svc.Retry(ctx, j.ID, bob); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("Retry by another owner: %v", err)
		}
		again, err := svc.Retry(ctx, j.ID, alice)
		if err != nil {
			t.Fatal(err)
		}
		if again.State.Final() || again.Error != nil || again.FinishedAt != nil {
			t.Fatalf("retried job: %+v", again)
		}
		done := waitState(t, svc, j.ID, alice, jobs.Succeeded)
		if done.Attempts != 2 || string(done.Result) != `{"attempt":2}` || done.Error != nil {
			t.Fatalf("retried job: %+v", done)
		}
		if _, err := svc.Retry(ctx, j.ID, alice); !errors.Is(err, jobs.ErrState) {
			t.Fatalf("Retry of a succeeded job: %v", err)
		}

		// A failed job whose inputs have expired cannot be retried.
		j = submit(t, svc, alice, "flaky", upload("in.pdf", pdfFixture(t)))
		waitState(t, svc, j.ID, alice, jobs.Failed)
		e.clock.Advance(time.Hour)
		if _, err := svc.Retry(ctx, j.ID, alice); !errors.Is(err, jobs.ErrExpired) {
			t.Fatalf("Retry with expired inputs: %v", err)
		}
	})
}

func TestCancel(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		block := newBlocker()
		ran := make(chan string, 4)
		svc := e.open(t, map[string]jobs.Handler{
			"hold": block.handler(false),
			"pdf": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
				ran <- run.JobID
				return nil, nil
			}},
		}, func(c *jobs.Config) { c.MaxWorkers = 1 })
		ctx := context.Background()

		running := submit(t, svc, alice, "hold")
		block.wait(t)
		queued := submit(t, svc, alice, "pdf")

		// Queued: cancelled at once, and it never runs.
		if _, err := svc.Cancel(ctx, queued.ID, bob); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("Cancel by another owner: %v", err)
		}
		c, err := svc.Cancel(ctx, queued.ID, alice)
		if err != nil || c.State != jobs.Cancelled || c.FinishedAt == nil {
			t.Fatalf("Cancel of a queued job: %+v, %v", c, err)
		}
		if c, err := svc.Cancel(ctx, queued.ID, alice); err != nil || c.State != jobs.Cancelled {
			t.Fatalf("Cancel again: %+v, %v", c, err)
		}

		// Running: its handler's context ends and it ends cancelled.
		c, err = svc.Cancel(ctx, running.ID, alice)
		if err != nil {
			t.Fatal(err)
		}
		if c.State != jobs.Running && c.State != jobs.Cancelled {
			t.Fatalf("Cancel of a running job returned it %s", c.State)
		}
		got := waitState(t, svc, running.ID, alice, jobs.Cancelled)
		if got.Error != nil || got.Attempts != 1 {
			t.Fatalf("cancelled job: %+v", got)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "jobs", running.ID, "out")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a cancelled run's output directory is kept: %v", err)
		}

		// The worker is free; a job submitted now runs, and the cancelled one
		// never did.
		next := submit(t, svc, alice, "pdf")
		waitState(t, svc, next.ID, alice, jobs.Succeeded)
		if id := <-ran; id != next.ID {
			t.Fatalf("ran %s, want only %s", id, next.ID)
		}
		if j, _ := svc.Get(ctx, queued.ID, alice); j.State != jobs.Cancelled || j.Attempts != 0 || j.StartedAt != nil {
			t.Fatalf("the cancelled queued job: %+v", j)
		}
		if _, err := svc.Cancel(ctx, next.ID, alice); !errors.Is(err, jobs.ErrState) {
			t.Fatalf("Cancel of a succeeded job: %v", err)
		}

		// A cancelled job can be retried.
		if _, err := svc.Retry(ctx, queued.ID, alice); err != nil {
			t.Fatal(err)
		}
		waitState(t, svc, queued.ID, alice, jobs.Succeeded)
	})
}

// One job's output is the next job's input, without a download; another
// owner's file and an expired one are refused.
func TestReferences(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		media := mediaStore{"m1": pdfFixture(t), "png": pngBytes(t)}
		svc := e.open(t, map[string]jobs.Handler{"pdf": stamp()}, func(c *jobs.Config) { c.Media = media })
		ctx := context.Background()
		pdf := pdfFixture(t)

		first := submit(t, svc, alice, "pdf", upload("doc.pdf", pdf))
		waitState(t, svc, first.ID, alice, jobs.Succeeded)

		second, err := svc.Submit(ctx, jobs.Submission{
			Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`), Accept: []string{sniff.PDF},
			References: []jobs.Reference{{Job: first.ID, File: "stamped-doc.pdf", Name: "again.pdf"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(second.References) != 1 || second.References[0].Job != first.ID || len(second.Files) != 1 ||
			second.Files[0].Source != "job:"+first.ID+"/stamped-doc.pdf" || second.Files[0].Name != "again.pdf" {
			t.Fatalf("second job: %+v", second)
		}
		waitState(t, svc, second.ID, alice, jobs.Succeeded)
		if got := readFile(t, svc, second.ID, "stamped-again.pdf", alice); !bytes.Equal(got, append(append(pdf, stampMark...), stampMark...)) {
			t.Fatal("the second job's output is not the first's stamped again")
		}

		// A media object the media store lets the owner read.
		third, err := svc.Submit(ctx, jobs.Submission{
			Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`), Accept: []string{sniff.PDF},
			References: []jobs.Reference{{Media: "m1", Name: "m1.pdf"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		waitState(t, svc, third.ID, alice, jobs.Succeeded)

		refused := []struct {
			name  string
			owner string
			ref   jobs.Reference
			want  error
		}{
			{name: "another owner's file", owner: bob, ref: jobs.Reference{Job: first.ID, File: "stamped-doc.pdf"}, want: jobs.ErrReference},
			{name: "an input, not a result", owner: alice, ref: jobs.Reference{Job: first.ID, File: "doc.pdf"}, want: jobs.ErrReference},
			{name: "no such file", owner: alice, ref: jobs.Reference{Job: first.ID, File: "nope.pdf"}, want: jobs.ErrReference},
			{name: "no such job", owner: alice, ref: jobs.Reference{Job: "job_nope", File: "x.pdf"}, want: jobs.ErrReference},
			{name: "media the store refuses", owner: alice, ref: jobs.Reference{Media: "unknown"}, want: jobs.ErrReference},
			{name: "media of the wrong type", owner: alice, ref: jobs.Reference{Media: "png", Name: "p.pdf"}, want: jobs.ErrFileType},
			{name: "both kinds", owner: alice, ref: jobs.Reference{Media: "m1", Job: first.ID, File: "x"}, want: jobs.ErrInvalid},
			{name: "neither kind", owner: alice, ref: jobs.Reference{Name: "x"}, want: jobs.ErrInvalid},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				_, err := svc.Submit(ctx, jobs.Submission{Owner: tt.owner, Type: "pdf", Input: json.RawMessage(`{}`),
					Accept: []string{sniff.PDF}, References: []jobs.Reference{tt.ref}})
				if !errors.Is(err, tt.want) {
					t.Fatalf("Submit: %v, want %v", err, tt.want)
				}
			})
		}

		// Expired: refused, even before the sweep.
		e.clock.Advance(time.Hour)
		_, err = svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`), Accept: []string{sniff.PDF},
			References: []jobs.Reference{{Job: first.ID, File: "stamped-doc.pdf"}}})
		var fe *jobs.FileError
		if !errors.As(err, &fe) || !errors.Is(err, jobs.ErrExpired) || fe.Name != "stamped-doc.pdf" {
			t.Fatalf("Submit with an expired reference: %v", err)
		}
		if err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.OpenFile(ctx, first.ID, "stamped-doc.pdf", alice); !errors.Is(err, jobs.ErrNotFound) {
			t.Fatalf("the first job's output after the sweep: %v", err)
		}

		// Without a media store, media references are refused.
		e2 := newEnvOn(t, backend)
		svc2 := e2.open(t, map[string]jobs.Handler{"pdf": stamp()}, nil)
		_, err = svc2.Submit(ctx, jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`), Accept: []string{sniff.PDF},
			References: []jobs.Reference{{Media: "m1"}}})
		if !errors.Is(err, jobs.ErrNoMediaStore) {
			t.Fatalf("a media reference without a media store: %v", err)
		}
	})
}

// mediaStore lets alice read its objects.
type mediaStore map[string][]byte

var errNoMedia = errors.New("no such media object")

func (m mediaStore) OpenMedia(ctx context.Context, owner, id string) (io.ReadCloser, error) {
	b, ok := m[id]
	if !ok || owner != alice {
		return nil, errNoMedia
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// counter is a reader that counts what was read from it; endless, it
// repeats its pattern forever after head.
type counter struct {
	head []byte
	read int64
}

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		if c.read+int64(i) < int64(len(c.head)) {
			p[i] = c.head[c.read+int64(i)]
		} else {
			p[i] = ' '
		}
	}
	c.read += int64(len(p))
	return len(p), nil
}

// Files are sniffed from their bytes and size-limited while read; a refused
// file leaves no job behind.
func TestSubmitRefusals(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{"pdf": stamp()}, func(c *jobs.Config) { c.MaxFiles = 2 })
		ctx := context.Background()
		pdf := pdfFixture(t)
		valid := func() jobs.Submission {
			return jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{"tool":"protect"}`), Accept: []string{sniff.PDF}}
		}
		readErr := errors.New("the client went away")
		errCheck := errors.New("the file input is missing")

		tests := []struct {
			name  string
			edit  func(*jobs.Submission)
			want  error
			media string // the FileError's sniffed type
		}{
			{name: "a PNG named .pdf", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload("photo.pdf", pngBytes(t)))
			}, want: jobs.ErrFileType, media: sniff.PNG},
			{name: "a PDF then a PNG", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload("a.pdf", pdf), upload("b.pdf", pngBytes(t)))
			}, want: jobs.ErrFileType, media: sniff.PNG},
			{name: "an empty file", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload("empty.pdf", nil))
			}, want: jobs.ErrFileType, media: sniff.Empty},
			{name: "nothing accepted", edit: func(s *jobs.Submission) {
				s.Accept = nil
				s.Files = jobs.Uploads(upload("a.pdf", pdf))
			}, want: jobs.ErrFileType, media: sniff.PDF},
			{name: "too large", edit: func(s *jobs.Submission) {
				s.MaxFileBytes = int64(len(pdf) - 1)
				s.Files = jobs.Uploads(upload("a.pdf", pdf))
			}, want: jobs.ErrTooLarge},
			{name: "too many files", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload("a.pdf", pdf), upload("b.pdf", pdf), upload("c.pdf", pdf))
			}, want: jobs.ErrInvalid},
			{name: "a name used twice", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload("a.pdf", pdf), upload("a.pdf", pdf))
			}, want: jobs.ErrInvalid},
			{name: "a path as a name", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload("../a.pdf", pdf))
			}, want: jobs.ErrInvalid},
			{name: "a hidden name", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload(".a.pdf", pdf))
			}, want: jobs.ErrInvalid},
			{name: "an upload that fails", edit: func(s *jobs.Submission) {
				s.Files = func(yield func(jobs.Upload, error) bool) {
					if yield(upload("a.pdf", pdf), nil) {
						yield(jobs.Upload{}, readErr)
					}
				}
			}, want: readErr},
			{name: "a check that refuses the files", edit: func(s *jobs.Submission) {
				s.Files = jobs.Uploads(upload("b.pdf", pdf), upload("a.pdf", pdf))
				s.Check = func(names []string) error {
					if !slices.Equal(names, []string{"a.pdf", "b.pdf"}) {
						return fmt.Errorf("checked %v, want the stored files by name", names)
					}
					return errCheck
				}
			}, want: errCheck},
			{name: "no owner", edit: func(s *jobs.Submission) { s.Owner = "" }, want: jobs.ErrInvalid},
			{name: "unknown type", edit: func(s *jobs.Submission) { s.Type = "nope" }, want: jobs.ErrUnknownType},
			{name: "input not an object", edit: func(s *jobs.Submission) { s.Input = json.RawMessage(`[1]`) }, want: jobs.ErrInvalid},
			{name: "input not JSON", edit: func(s *jobs.Submission) { s.Input = json.RawMessage(`{"a":`) }, want: jobs.ErrInvalid},
			{name: "input too large", edit: func(s *jobs.Submission) {
				s.Input = json.RawMessage(`{"a":"` + strings.Repeat("x", jobs.DefaultMaxInputBytes) + `"}`)
			}, want: jobs.ErrInvalid},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				sub := valid()
				tt.edit(&sub)
				_, err := svc.Submit(ctx, sub)
				if !errors.Is(err, tt.want) {
					t.Fatalf("Submit: %v, want %v", err, tt.want)
				}
				var fe *jobs.FileError
				if tt.media != "" && (!errors.As(err, &fe) || fe.MediaType != tt.media) {
					t.Fatalf("Submit: %#v, want a FileError with media type %s", err, tt.media)
				}
			})
		}
		if rows, dirs := e.countJobs(t); rows != 0 || dirs != 0 {
			t.Fatalf("after the refusals: %d job rows and %d job directories, want none", rows, dirs)
		}
	})
}

// The size limit stops the read: an endless upload is refused after at most
// limit+1 bytes, and a file of the wrong type after its first bytes.
func TestLimitsWhileReading(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{"pdf": stamp()}, nil)
		ctx := context.Background()
		const limit = 64 << 10

		endless := &counter{head: []byte("%PDF-1.7\n")}
		_, err := svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`),
			Accept: []string{sniff.PDF}, MaxFileBytes: limit, Files: jobs.Uploads(jobs.Upload{Name: "big.pdf", Content: endless})})
		var fe *jobs.FileError
		if !errors.As(err, &fe) || !errors.Is(err, jobs.ErrTooLarge) || fe.LimitBytes != limit {
			t.Fatalf("Submit of an endless upload: %v", err)
		}
		if endless.read > limit+1 {
			t.Fatalf("read %d bytes of an upload limited to %d", endless.read, limit)
		}

		// The configured ceiling applies when the tool asks for more.
		e2 := newEnvOn(t, backend)
		svc2 := e2.open(t, map[string]jobs.Handler{"pdf": stamp()}, func(c *jobs.Config) { c.MaxFileBytes = limit })
		endless = &counter{head: []byte("%PDF-1.7\n")}
		_, err = svc2.Submit(ctx, jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`),
			Accept: []string{sniff.PDF}, MaxFileBytes: 10 * limit, Files: jobs.Uploads(jobs.Upload{Name: "big.pdf", Content: endless})})
		if !errors.As(err, &fe) || fe.LimitBytes != limit || endless.read > limit+1 {
			t.Fatalf("Submit past the ceiling: %v after %d bytes", err, endless.read)
		}

		png := &counter{head: pngBytes(t)}
		_, err = svc.Submit(ctx, jobs.Submission{Owner: alice, Type: "pdf", Input: json.RawMessage(`{}`),
			Accept: []string{sniff.PDF}, Files: jobs.Uploads(jobs.Upload{Name: "x.pdf", Content: png})})
		if !errors.Is(err, jobs.ErrFileType) || png.read > sniff.HeadBytes {
			t.Fatalf("Submit of an endless PNG: %v after %d bytes", err, png.read)
		}
	})
}

// A handler's outputs must be plain new files; a panic fails the job.
func TestBadHandlers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, backend storetest.Backend) {
		e := newEnvOn(t, backend)
		svc := e.open(t, map[string]jobs.Handler{
			"panics": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) { panic("boom") }},
			"subdir": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
				return nil, os.Mkdir(filepath.Join(run.OutDir, "sub"), 0o700)
			}},
			"badjson": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
				return json.RawMessage(`{`), nil
			}},
			"plainerr": {Run: func(ctx context.Context, run *jobs.Run) (json.RawMessage, error) {
				return nil, errors.New("secret detail /etc/passwd")
			}},
		}, nil)
		tests := []struct {
			typ  string
			want toolerr.Code
		}{
			{"panics", toolerr.ExecutionFailed},
			{"subdir", toolerr.InvalidOutput},
			{"badjson", toolerr.InvalidOutput},
			{"plainerr", toolerr.ExecutionFailed},
		}
		for _, tt := range tests {
			t.Run(tt.typ, func(t *testing.T) {
				j := submit(t, svc, alice, tt.typ)
				got := waitState(t, svc, j.ID, alice, jobs.Failed)
				if got.Error.Code != tt.want || got.Error.Message != "" {
					t.Fatalf("error %+v, want %s without a message", got.Error, tt.want)
				}
			})
		}
	})
}
