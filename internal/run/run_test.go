package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/guest"
	"github.com/toolhost/toolhost/internal/engine"
	"github.com/toolhost/toolhost/internal/executor"
	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/policy"
	"github.com/toolhost/toolhost/internal/registry"
	"github.com/toolhost/toolhost/internal/run"
	"github.com/toolhost/toolhost/internal/toolerr"
	"github.com/toolhost/toolhost/internal/wire"
)

// The application layer over a real registry (two builtin packages, their
// declarations decoded and checked as any), a real executor and a real
// guard. The engine is an in-process runner: what run decides does not
// depend on which sandbox runs the item.

type echoIn struct {
	Operation string `json:"operation"`
	Text      string `json:"text" maxLength:"16"`
}

type echoOut struct {
	Text string `json:"text"`
}

type fileIn struct {
	Operation string `json:"operation"`
	File      string `json:"file" contentEncoding:"base64"`
	Level     string `json:"level"`
}

// echo runs every item: it echoes the text, and fails with a tool's own
// error for the text "fail".
type echo struct{}

func (echo) Run(_ context.Context, job engine.Job) (*engine.Outcome, error) {
	var in echoIn
	if err := json.Unmarshal(job.Parameters, &in); err != nil {
		return nil, toolerr.New(toolerr.InvalidParameters)
	}
	if in.Text == "fail" {
		e := toolerr.Raised(toolerr.InvalidParameters, false)
		e.Message = "fail is not a text this tool echoes"
		return nil, e
	}
	out, _ := json.Marshal(echoOut{Text: in.Text})
	return &engine.Outcome{Result: out}, nil
}

func texts(name string) map[string]guest.Text {
	t := map[string]guest.Text{}
	for _, lang := range []string{"en", "it", "fr", "es"} {
		t[lang] = guest.Text{Name: name, Description: name + ", for tests."}
	}
	return t
}

func declaration(t *testing.T, services ...guest.Declaration) []byte {
	t.Helper()
	decl, err := guest.Package{ContractVersion: "1.0.0", ImplementationVersion: "1.0.0", Services: services}.Declaration()
	if err != nil {
		t.Fatal(err)
	}
	return decl
}

type rig struct {
	app  *run.App
	snap func() *registry.Snapshot
}

func newRig(t *testing.T, g *guard.Guard) *rig {
	t.Helper()
	return newLoggedRig(t, g, nil)
}

// newLoggedRig is newRig with the application layer's log going to logger.
func newLoggedRig(t *testing.T, g *guard.Guard, logger *slog.Logger) *rig {
	t.Helper()
	ctx := context.Background()
	echoDecl := declaration(t, &guest.Service[echoIn, echoOut]{
		Code: "echo", Name: "Echo", Description: "Echoes, for tests.", Texts: texts("Echo"),
		Category: "test", IconKey: "echo",
		UI:            guest.UI{Kind: "custom", ComponentKey: "echo", Version: "1.0.0"},
		Documentation: guest.Documentation{Path: "tools/echo", Version: "1.0.0"},
		Operations:    []guest.Operation{{Name: "echo"}},
		Platform:      &guest.Platform{Execution: "sync", QuotaClass: "tools-run", Cost: 1},
		Compute:       func(*guest.Context, echoIn) (echoOut, error) { return echoOut{}, nil }, // runs in the echo runner
	})
	fileDecl := declaration(t, &guest.Service[fileIn, echoOut]{
		Code: "protect", Name: "Protect", Description: "Takes a file, for tests.", Texts: texts("Protect"),
		Category: "test", IconKey: "protect",
		UI:            guest.UI{Kind: "custom", ComponentKey: "protect", Version: "1.0.0"},
		Documentation: guest.Documentation{Path: "tools/protect", Version: "1.0.0"},
		Operations:    []guest.Operation{{Name: "protect"}},
		Platform: &guest.Platform{Execution: "job", Job: &guest.Job{Type: "protect-test", Operation: "protect", Preset: map[string]any{"level": "high"}},
			Files: []guest.FileInput{{Name: "file", Types: []string{"application/pdf"}, MaxBytes: 1 << 20}}, OutputFiles: true,
			RequireCaller: true, QuotaClass: "tools-job", Cost: 2},
		Compute: func(*guest.Context, fileIn) (echoOut, error) { return echoOut{}, nil },
	})
	reg, err := registry.Open(ctx, registry.Config{Static: true, Platform: policy.DefaultPlatform(), Logger: slog.New(slog.DiscardHandler), Builtins: []registry.Builtin{
		{Name: "echo", Declaration: echoDecl, Runner: echo{}},
		{Name: "protect", Declaration: fileDecl, Runner: echo{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(ctx) })
	if f := reg.Snapshot().Failures(); len(f) > 0 {
		t.Fatalf("registration failures: %+v", f)
	}
	ex, err := executor.New(executor.Config{Snapshot: reg.Snapshot})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Shutdown(ctx) })
	app, err := run.New(run.Config{Snapshot: reg.Snapshot, Executor: ex, Guard: g, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{app: app, snap: reg.Snapshot}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := wire.Decode([]byte(s), wire.Limits{MaxDepth: 200})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func refusal(t *testing.T, err error, want run.Code) *run.Refusal {
	t.Helper()
	r, ok := run.AsRefusal(err)
	if !ok || r.Code != want {
		t.Fatalf("got %v, want the refusal %s", err, want)
	}
	return r
}

func TestSync(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	svc, err := run.Lookup(r.snap(), "echo")
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Runnable(svc); err != nil {
		t.Fatal(err)
	}

	res, err := r.app.Sync(ctx, run.Origin{}, svc, decode(t, `{"operation":"echo","text":"hi"}`), time.Now())
	if err != nil || !res.Succeeded || string(res.Result) != `{"text":"hi"}` || res.ExecutionID == "" {
		t.Fatalf("success: %+v %v", res, err)
	}

	// The tool's own error is a run that happened: failed, with its code
	// and message.
	res, err = r.app.Sync(ctx, run.Origin{}, svc, decode(t, `{"operation":"echo","text":"fail"}`), time.Now())
	if err != nil || res.Succeeded || res.Error.Code != toolerr.InvalidParameters || res.Error.Message == "" {
		t.Fatalf("tool error: %+v %v", res, err)
	}

	// Input the schema refuses is a refusal before anything runs.
	_, err = r.app.Sync(ctx, run.Origin{}, svc, decode(t, `{"operation":"echo","text":"far too long for this tool"}`), time.Now())
	ref := refusal(t, err, run.InvalidInput)
	if len(ref.Issues) != 1 || ref.Issues[0].Code != "max_length" || ref.Retryable() {
		t.Fatalf("invalid input: %+v", ref)
	}
	_, err = r.app.Sync(ctx, run.Origin{}, svc, decode(t, `{"operation":"shout","text":"hi"}`), time.Now())
	refusal(t, err, run.InvalidInput)
	deep := `{"operation":"echo","text":"x","deep":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	_, err = r.app.Sync(ctx, run.Origin{}, svc, decode(t, deep), time.Now())
	refusal(t, err, run.InputTooLarge)

	// A client that leaves ends the run with its context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.app.Sync(cctx, run.Origin{}, svc, decode(t, `{"operation":"echo","text":"hi"}`), time.Now()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}

	_, err = run.Lookup(r.snap(), "nope")
	refusal(t, err, run.ToolNotFound)
}

func TestItemIsCheckedOnce(t *testing.T) {
	r := newRig(t, nil)
	svc, _ := run.Lookup(r.snap(), "echo")
	it, terr := r.app.Item(svc, "c1", decode(t, `{"text":"hi","operation":"echo"}`))
	if terr != nil {
		t.Fatal(terr)
	}
	d := svc.Definition
	if !it.Checked || it.Operation != "echo" || string(it.Parameters) != `{"operation":"echo","text":"hi"}` ||
		it.ContractVersion != d.ContractVersion || it.SchemaFingerprint != d.Fingerprint {
		t.Fatalf("item %+v", it)
	}
}

func TestAdmit(t *testing.T) {
	tbl := guard.DefaultTable()
	c := tbl.Classes[guard.ClassRun]
	c.Anonymous = guard.Allowance{Burst: 1, PerMinute: 1}
	tbl.Classes[guard.ClassRun] = c
	g, err := guard.New(guard.Config{Mode: guard.Enforce, Quotas: tbl})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, g)
	ctx := context.Background()
	anon := run.Origin{Caller: guard.Caller{Tier: guard.Anonymous, Key: "ip:192.0.2.1"}, RequestID: "r1"}
	echo, _ := run.Lookup(r.snap(), "echo")
	ad, err := r.app.Admit(ctx, anon, echo, nil)
	if err != nil || len(ad.Limits.Policy) == 0 {
		t.Fatalf("first: %+v %v", ad, err)
	}
	ad.Release()
	_, err = r.app.Admit(ctx, anon, echo, nil)
	if ref := refusal(t, err, run.QuotaExceeded); !ref.Retryable() || len(ref.Limits.Limit) == 0 {
		t.Fatalf("quota: %+v", ref)
	}

	// A job tool that needs a signed-in caller refuses an anonymous one
	// before any body is read, and the guard too.
	protect, _ := run.Lookup(r.snap(), "protect")
	refusal(t, run.JobRunnable(protect, anon), run.Unauthenticated)
	_, err = r.app.Admit(ctx, anon, protect, nil)
	refusal(t, err, run.Unauthenticated)

	user := run.Origin{Caller: guard.Caller{Tier: guard.User, Key: "p:user:1", Principal: "user:1"}}
	if err := run.JobRunnable(protect, user); err != nil {
		t.Fatal(err)
	}
}

func TestPrepareBatch(t *testing.T) {
	r := newRig(t, nil)
	snap := r.snap()
	svc, _ := snap.Service("echo")
	d := svc.Definition
	items := r.app.PrepareBatch(snap, []run.BatchItem{
		{CorrelationID: "ok", ToolCode: "echo", ContractVersion: d.ContractVersion, ImplementationVersion: d.ImplementationVersion,
			SchemaFingerprint: d.Fingerprint, Parameters: decode(t, `{"operation":"echo","text":"hi"}`)},
		{CorrelationID: "stale", ToolCode: "echo", ContractVersion: d.ContractVersion, ImplementationVersion: "0.9.0",
			SchemaFingerprint: d.Fingerprint, Parameters: decode(t, `{"operation":"echo","text":"hi"}`)},
		{CorrelationID: "invalid", ToolCode: "echo", ContractVersion: d.ContractVersion, ImplementationVersion: d.ImplementationVersion,
			SchemaFingerprint: d.Fingerprint, Parameters: decode(t, `{"operation":"echo"}`)},
		{CorrelationID: "unknown", ToolCode: "nope", Parameters: decode(t, `{}`)},
	})
	want := []toolerr.Code{"", toolerr.VersionMismatch, toolerr.InvalidParameters, ""}
	for i, it := range items {
		var got toolerr.Code
		if it.Refusal != nil {
			got = it.Refusal.Code
		}
		if got != want[i] {
			t.Errorf("item %s: refusal %q, want %q", it.CorrelationID, got, want[i])
		}
	}
	res, err := r.app.Batch(context.Background(), run.Origin{RequestID: "b"}, "p:user:1", items, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 1 || res.Items[3].Error.Code != toolerr.UnknownTool || res.Items[1].ExecutionID != "" {
		t.Fatalf("batch: %+v", res)
	}
	// The parameters were validated here, once: the success and the
	// refused item have an input_validation_ms; the items whose parameters
	// were never checked (a stale pin, an unknown code) have null (issue
	// 16, item 19).
	for i, measured := range []bool{true, false, true, false} {
		if got := res.Items[i].Metrics.InputValidation != nil; got != measured {
			t.Errorf("item %s: input_validation_ms measured %v, want %v", res.Items[i].CorrelationID, got, measured)
		}
	}
}

// TestBatchWithholdsToolMessage: a compute item's tool error answers its
// code, retryable and issues, never the tool's raw text (seed 000's
// sanitizer); the text goes to the log. The run route keeps it (TestSync).
func TestBatchWithholdsToolMessage(t *testing.T) {
	var logged strings.Builder
	r := newLoggedRig(t, nil, slog.New(slog.NewTextHandler(&logged, nil)))
	snap := r.snap()
	svc, _ := snap.Service("echo")
	d := svc.Definition
	items := r.app.PrepareBatch(snap, []run.BatchItem{
		{CorrelationID: "fail", ToolCode: "echo", ContractVersion: d.ContractVersion, ImplementationVersion: d.ImplementationVersion,
			SchemaFingerprint: d.Fingerprint, Parameters: decode(t, `{"operation":"echo","text":"fail"}`)},
	})
	res, err := r.app.Batch(context.Background(), run.Origin{RequestID: "b"}, "p:user:1", items, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e := res.Items[0].Error
	if e == nil || e.Code != toolerr.InvalidParameters || e.Retryable || e.Message != "" {
		t.Fatalf("compute item error: %+v", e)
	}
	if !strings.Contains(logged.String(), "fail is not a text this tool echoes") {
		t.Fatalf("the message is not in the log: %s", logged.String())
	}
	// The same tool error on the run route keeps its message.
	sync, err := r.app.Sync(context.Background(), run.Origin{}, svc, decode(t, `{"operation":"echo","text":"fail"}`), time.Now())
	if err != nil || sync.Error == nil || sync.Error.Message == "" {
		t.Fatalf("run route: %+v %v", sync, err)
	}
}

func TestJobInput(t *testing.T) {
	r := newRig(t, nil)
	protect, _ := run.Lookup(r.snap(), "protect")
	in := run.JobInput(protect, map[string]any{"level": "low", "x": "y"})
	if in["tool"] != "protect" || in["level"] != "high" || in["x"] != "y" {
		t.Fatalf("job input %v", in)
	}
	none := func(string) bool { return false }
	all := func(string) bool { return true }
	input := map[string]any{"tool": "protect", "level": "high"}
	// A required file nobody sends is refused before a job exists; one
	// that a form may upload is not.
	if ref := refusal(t, run.CheckJobInput(protect, input, none), run.InvalidInput); len(ref.Issues) == 0 || ref.Issues[0].Path[0] != "file" {
		t.Fatalf("missing file: %+v", ref)
	}
	if err := run.CheckJobInput(protect, input, all); err != nil {
		t.Fatal(err)
	}
	if _, err := run.JobTool(r.snap(), "protect-test", "protect"); err != nil {
		t.Fatal(err)
	}
	_, err := run.JobTool(r.snap(), "protect-test", "other")
	refusal(t, err, run.ToolNotFound)
}
