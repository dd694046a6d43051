package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/jobs"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/store"
	"github.com/toolhost/toolhost/internal/toolerr"
)

// jobTime is the format of the times `jobs` prints: UTC, to the
// millisecond, as the store keeps them.
const jobTime = "2006-01-02T15:04:05.000Z"

// jobRow is one job as `jobs list --json` prints it: the row without its
// input, result and files (`jobs show` has them).
type jobRow struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Owner      string `json:"owner"`
	State      string `json:"state"`
	Attempts   int    `json:"attempts"`
	CreatedAt  string `json:"created_at"`
	StartedAt  string `json:"started_at,omitempty"`
	FinishedAt string `json:"finished_at,omitempty"`
	// ErrorCode is the failed job's error code.
	ErrorCode string `json:"error_code,omitempty"`
}

// jobView is one job as `jobs show --json` and `jobs cancel --json` print
// it: the API's document of the job, with its owner (which the API never
// shows) and the folder of its files.
type jobView struct {
	*jobs.Job
	Owner  string `json:"owner"`
	Folder string `json:"folder"`
}

// runJobs is `jobs list|show|cancel`: an operator's view of the jobs of
// any backend (--store, else the data folder's SQLite file), every
// owner's, beside the serving processes — it opens the jobs for control
// only (jobs.OpenControl: no lock, no runner). list prints the newest jobs
// first, a table or with --json one canonical JSON row a line; show prints
// one job with its files and error; cancel cancels a job: a queued one at
// once, a running one by asking the process running it through the store
// (it ends cancelled when its run stops, within a second or two), and
// prints the state the job is in then.
func runJobs(args []string, stdout io.Writer) (err error) {
	if len(args) == 0 {
		return fmt.Errorf("%w: jobs takes the subcommand list, show or cancel", errUsage)
	}
	sub := args[0]
	fs := flag.NewFlagSet("jobs "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	var df dataFlags
	df.register(o)
	filesDir := o.String("files-dir")
	redisURL := o.String("redis")
	asJSON := fs.Bool("json", false, "print canonical JSON instead of text")
	var filter jobs.ListFilter
	var state string
	var id string
	switch sub {
	case "list":
		fs.StringVar(&filter.Owner, "owner", "", "only the jobs of this `owner`, as the jobs store it (user:ID, app:ID, session:ID, anonymous:…)")
		fs.StringVar(&state, "state", "", "only the jobs in this `state`: queued, running, succeeded, failed or cancelled")
		fs.IntVar(&filter.Limit, "limit", jobs.DefaultListLimit, fmt.Sprintf("the most jobs printed (`N`, at most %d)", jobs.MaxListLimit))
		if rest, err := o.parse(args[1:], false); err != nil || len(rest) != 0 {
			return usageOr(err, fmt.Errorf("%w: jobs list takes [--owner O] [--state S] [--limit N] [--json]", errUsage))
		}
		if filter.Limit <= 0 || filter.Limit > jobs.MaxListLimit {
			return fmt.Errorf("%w: --limit %d is not 1 to %d", errUsage, filter.Limit, jobs.MaxListLimit)
		}
		filter.State = jobs.State(state)
	case "show", "cancel":
		rest, err := o.parse(args[1:], true)
		if err != nil || len(rest) != 1 {
			return usageOr(err, fmt.Errorf("%w: jobs %s takes a job ID", errUsage, sub))
		}
		id = rest[0]
	default:
		return fmt.Errorf("%w: jobs takes the subcommand list, show or cancel, not %q", errUsage, sub)
	}

	ctx := context.Background()
	svc, closeJobs, err := openJobs(ctx, df, *filesDir, *redisURL)
	if err != nil {
		return err
	}
	defer closeReporting(&err, closeJobs)
	switch sub {
	case "list":
		list, err := svc.List(ctx, filter)
		if errors.Is(err, jobs.ErrInvalid) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if err != nil {
			return err
		}
		return printJobList(stdout, list, *asJSON)
	case "show":
		job, err := svc.Show(ctx, id)
		if err != nil {
			return fmt.Errorf("job %s: %w", id, err)
		}
		return printJob(stdout, job, jobFolder(df, *filesDir, id), *asJSON)
	default:
		job, err := svc.CancelAny(ctx, id)
		if err != nil {
			return fmt.Errorf("cancelling job %s: %w", id, err)
		}
		if *asJSON {
			return printJob(stdout, job, jobFolder(df, *filesDir, id), true)
		}
		line := fmt.Sprintf("%s %s", job.ID, job.State)
		if job.State == jobs.Running {
			line += " (cancel requested: the process running it stops it, and it ends cancelled)"
		}
		_, err = fmt.Fprintln(stdout, line)
		return err
	}
}

// openJobs opens the store of df and the jobs on it for control only.
// A data folder without a database is errNoDatabase, so that a mistyped
// --data-dir does not read as no jobs. With the replicas' Redis
// (redisURL), a job this command ends frees its concurrency slots there
// at once; without it they lapse with their lease (guard.JobSlotLease),
// as the slots of a single server's jobs do — its guard is in its
// memory, which this command cannot reach.
func openJobs(ctx context.Context, df dataFlags, filesDir, redisURL string) (*jobs.Service, func() error, error) {
	var keeper jobs.SlotKeeper
	closeRedis := func() error { return nil }
	if redisURL != "" {
		rdb, err := redisconn.Open(redisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: --redis: %v", errUsage, err)
		}
		sems := guard.NewRedisSemaphores(rdb, server.RedisPrefix+"s:", 0)
		g, err := guard.New(guard.Config{Semaphores: sems})
		if err != nil {
			return nil, nil, errors.Join(err, rdb.Close())
		}
		keeper = slotReleaser{g}
		closeRedis = func() error { return errors.Join(sems.Close(), rdb.Close()) }
	}
	svc, closeJobs, err := openJobStore(ctx, df, filesDir, keeper)
	if err != nil {
		return nil, nil, errors.Join(err, closeRedis())
	}
	return svc, func() error { return errors.Join(closeJobs(), closeRedis()) }, nil
}

// slotReleaser frees the slots of the jobs the command ends, in the
// replicas' shared guard; it renews none (it runs no job).
type slotReleaser struct{ g *guard.Guard }

func (r slotReleaser) RenewSlots(context.Context, string) error { return nil }

func (r slotReleaser) ReleaseSlots(ctx context.Context, slots string) error {
	ss, err := guard.DecodeSlots(slots)
	if err != nil {
		return err
	}
	return r.g.ReleaseSlots(ctx, ss)
}

// openJobStore opens the store of df and the jobs on it for control only,
// with keeper freeing the slots of the jobs it ends (nil: none).
func openJobStore(ctx context.Context, df dataFlags, filesDir string, keeper jobs.SlotKeeper) (*jobs.Service, func() error, error) {
	path, local := df.database()
	if _, err := os.Stat(path); local && errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w at %s", errNoDatabase, path)
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	svc, err := jobs.OpenControl(ctx, jobs.Config{Store: st, DataDir: df.dataDir, FilesDir: filesDir, Slots: keeper})
	if err != nil {
		return nil, nil, errors.Join(err, st.Close())
	}
	return svc, func() error {
		return errors.Join(svc.Close(context.Background()), st.Close())
	}, nil
}

// jobFolder is where job id's files are: under --files-dir, else the data
// folder's jobs/.
func jobFolder(df dataFlags, filesDir, id string) string {
	root := filesDir
	if root == "" {
		root = filepath.Join(df.dataDir, "jobs")
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return filepath.Join(root, id)
}

// printJobList writes list as a table, or as one canonical JSON row a
// line.
func printJobList(w io.Writer, list []*jobs.Job, asJSON bool) error {
	rows := make([]jobRow, 0, len(list))
	for _, j := range list {
		r := jobRow{ID: j.ID, Type: j.Type, Owner: j.Owner, State: string(j.State), Attempts: j.Attempts,
			CreatedAt: j.CreatedAt.UTC().Format(jobTime), StartedAt: optJobTime(j.StartedAt), FinishedAt: optJobTime(j.FinishedAt),
			ErrorCode: errorCode(j.Error)}
		rows = append(rows, r)
	}
	if asJSON {
		for _, r := range rows {
			if err := printCanonical(w, r); err != nil {
				return err
			}
		}
		return nil
	}
	var b strings.Builder
	b.WriteString("ID\tTYPE\tOWNER\tSTATE\tATTEMPTS\tCREATED\tFINISHED\n")
	for _, r := range rows {
		state := r.State
		if r.ErrorCode != "" {
			state += " (" + r.ErrorCode + ")"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Type, r.Owner, state, r.Attempts, r.CreatedAt, dash(r.FinishedAt))
	}
	return printTable(w, b.String())
}

// printJob writes job, its files in folder, as text lines or one
// canonical JSON object.
func printJob(w io.Writer, job *jobs.Job, folder string, asJSON bool) error {
	if asJSON {
		return printCanonical(w, jobView{Job: job, Owner: job.Owner, Folder: folder})
	}
	var b strings.Builder
	for _, kv := range [][2]string{
		{"id", job.ID}, {"type", job.Type}, {"owner", job.Owner}, {"state", string(job.State)},
		{"attempts", fmt.Sprint(job.Attempts)}, {"created", job.CreatedAt.UTC().Format(jobTime)},
		{"started", dash(optJobTime(job.StartedAt))}, {"finished", dash(optJobTime(job.FinishedAt))},
		{"expires", dash(optJobTime(job.ExpiresAt))}, {"folder", folder},
	} {
		fmt.Fprintf(&b, "%s:\t%s\n", kv[0], kv[1])
	}
	if p := job.Progress; p.Done != 0 || p.Total != 0 || p.Message != "" {
		fmt.Fprintf(&b, "progress:\t%d/%d %s\n", p.Done, p.Total, p.Message)
	}
	if job.Error != nil {
		fmt.Fprintf(&b, "error:\t%s %s\n", job.Error.Code, job.Error.Message)
	}
	for _, f := range job.Files {
		fmt.Fprintf(&b, "file:\t%s %s %s %d bytes sha256:%s\n", f.Role, f.Name, f.MediaType, f.SizeBytes, f.SHA256)
	}
	return printTable(w, b.String())
}

func optJobTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(jobTime)
}

func errorCode(e *toolerr.Error) string {
	if e == nil {
		return ""
	}
	return string(e.Code)
}

// dash is s, or "-" for an empty column.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
