package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/toolerr"
)

var (
	// ErrNotFound is returned when a job or a file does not exist or does
	// not belong to the caller: the two are not told apart, so that an id
	// reveals nothing about another owner's jobs.
	ErrNotFound = errors.New("jobs: not found")

	// ErrExpired is returned when a file, or a signed URL, has passed its
	// expiry; and by Retry when an input file of the job has expired.
	ErrExpired = errors.New("jobs: expired")

	// ErrUnknownType is returned by Submit when no handler runs the job
	// type now (Config.Handlers or Config.Resolve).
	ErrUnknownType = errors.New("jobs: unknown job type")

	// ErrInvalid is returned by Submit when the submission itself is
	// malformed: no owner, an input that is not a JSON object or is too
	// large, a bad or repeated file name, too many files, a reference that
	// names neither a job file nor a media object.
	ErrInvalid = errors.New("jobs: invalid submission")

	// ErrFileType is returned (inside a *FileError) by Submit when a file's
	// sniffed media type is not one the submission accepts.
	ErrFileType = errors.New("jobs: file type not accepted")

	// ErrTooLarge is returned (inside a *FileError) by Submit when a file
	// passes the size limit. Reading stops at the limit.
	ErrTooLarge = errors.New("jobs: file too large")

	// ErrReference is returned (inside a *FileError) by Submit when an input
	// references a file the caller may not use: another owner's, one that
	// does not exist, an input rather than a result file, or a media object
	// the media store refuses.
	ErrReference = errors.New("jobs: reference refused")

	// ErrNoMediaStore is returned (inside a *FileError) by Submit when an
	// input references a media object and no [MediaStore] is configured.
	ErrNoMediaStore = errors.New("jobs: no media store for media references")

	// ErrState is returned when a job's state does not allow the action:
	// Retry of a job that is not failed or cancelled, Cancel of a job that
	// has succeeded or failed.
	ErrState = errors.New("jobs: not allowed in the job's state")

	// ErrSignature is returned when a signed URL's signature does not
	// match: it was altered, or signed with another key.
	ErrSignature = errors.New("jobs: bad signature")

	// ErrClosed is returned by every method after Close has begun.
	ErrClosed = errors.New("jobs: closed")

	// ErrLocked is returned by Open when another process (or another open
	// Service) holds the jobs data directory.
	ErrLocked = errors.New("jobs: data directory in use")

	// ErrConfig is returned by Open when the configuration is invalid.
	ErrConfig = errors.New("jobs: invalid configuration")

	// ErrStorageFull is returned when the data folder has no room for what
	// a call would write: Submit finds less free space than
	// Config.MinFreeBytes before reading anything, or a write fails with
	// ENOSPC or EDQUOT, or SQLite reports SQLITE_FULL. Nothing of the call
	// is left behind: no file, no row. The message names the folder.
	ErrStorageFull = errors.New("jobs: storage full")
)

// FileError is a refusal of one input file by Submit. Err is one of
// ErrFileType, ErrTooLarge, ErrReference, ErrExpired, ErrNoMediaStore or
// ErrInvalid; errors.Is sees Err and the underlying cause, if any.
type FileError struct {
	// Name is the input's name.
	Name string
	// MediaType is the sniffed type, set with ErrFileType.
	MediaType string
	// LimitBytes is the size limit, set with ErrTooLarge.
	LimitBytes int64
	// Err is the reason, one of the sentinels above.
	Err error
	// Cause is what Err was caused by, when something was: a media store's
	// own error, a read error of the upload.
	Cause error
}

// Error describes the refusal. It names the input and the sniffed type, both
// of which the caller sent or can see, and nothing of another owner's.
func (e *FileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %q", e.Err, e.Name)
	if e.MediaType != "" {
		fmt.Fprintf(&b, " is %s", e.MediaType)
	}
	if e.LimitBytes > 0 {
		fmt.Fprintf(&b, " (limit %d bytes)", e.LimitBytes)
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	return b.String()
}

// Unwrap returns Err and Cause.
func (e *FileError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// State is a job's state. Queued and Running are active; the others are
// final until a Retry.
type State string

// The job states.
const (
	Queued    State = "queued"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Final reports whether s is succeeded, failed or cancelled.
func (s State) Final() bool { return s == Succeeded || s == Failed || s == Cancelled }

// Role says whether a file was an input of its job or an output.
type Role string

// The file roles.
const (
	Input  Role = "input"
	Output Role = "output"
)

// Progress is what a handler last reported. Done and Total are in units the
// handler chooses (pages, bytes); Total is 0 when unknown.
type Progress struct {
	Done    int64  `json:"done"`
	Total   int64  `json:"total"`
	Message string `json:"message,omitempty"`
}

// Job is a snapshot of one job. It is a copy: changing it changes nothing.
type Job struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Owner string `json:"-"`
	State State  `json:"state"`
	// Input is the input document as submitted.
	Input json.RawMessage `json:"input"`
	// Progress is the last progress reported, as of the snapshot.
	Progress Progress `json:"progress"`
	// Result is the handler's result document; nil unless succeeded.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is set when failed.
	Error *toolerr.Error `json:"error,omitempty"`
	// Files are the job's files that have not been swept, inputs first,
	// each group by name.
	Files []File `json:"files"`
	// References are the references the job's inputs were made from.
	References []Reference `json:"references"`
	// Attempts counts the runs started: reruns after a crash and retries
	// included.
	Attempts int `json:"attempts"`
	// Version grows with every state change; events carry it.
	Version    int64      `json:"version"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// ExpiresAt is when the job's files expire; nil while it is active.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Replayed is set by Submit and Idempotent when the job is the one an
	// earlier submission with the same Idempotency-Key made, not a new
	// one (the HTTP layer may answer 200 rather than 202). It is not
	// stored: every other read leaves it false.
	Replayed bool `json:"-"`
}

// File describes one file of a job.
type File struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
	// MediaType is sniffed from the bytes, never taken from a name or a
	// header.
	MediaType string `json:"media_type"`
	SizeBytes int64  `json:"size_bytes"`
	// SHA256 is the lower-case hex SHA-256 of the content.
	SHA256 string `json:"sha256"`
	// Source is where an input came from: "upload", "job:<id>/<name>"
	// or "media:<id>"; "job" for an output.
	Source    string     `json:"source"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Upload is a file sent with a submission. Content is read once, to its end
// or to the size limit.
type Upload struct {
	// Name is the input's name in the job: 1 to 255 bytes of UTF-8, no
	// slash, backslash or control character, not starting with a dot. It
	// is only a name: the type is sniffed from the content.
	Name    string
	Content io.Reader
}

// Reference makes an input from a file that already exists, instead of an
// upload: either a result file of one of the owner's own jobs (Job and
// File), or a media object (Media) the [MediaStore] lets the owner read.
type Reference struct {
	// Name is the input's name in the new job; it defaults to File, or
	// to Media for a media reference.
	Name string `json:"name"`
	// Job and File name a result (output) file of an earlier job.
	Job  string `json:"job,omitempty"`
	File string `json:"file,omitempty"`
	// Media is the id of a media object.
	Media string `json:"media,omitempty"`
}

// MediaStore is the hook for references to uploaded media objects. There is
// no media store yet; when one exists it implements this, and Submit copies
// the object into the job like an upload (sniffed, size-limited).
type MediaStore interface {
	// OpenMedia opens media object id for reading on behalf of owner. It
	// returns an error when the object does not exist or owner may not
	// read it; Submit reports that as ErrReference with the error as the
	// cause. The caller closes the reader.
	OpenMedia(ctx context.Context, owner, id string) (io.ReadCloser, error)
}

// Submission is a new job.
type Submission struct {
	// Owner is the principal the job belongs to, opaque to this package.
	Owner string
	// Type is the job type, the key of its handler: a tool's run.job.type.
	Type string
	// Input is the input document, a JSON object: for a tool run,
	// { ...input, ...run.job.preset, tool: run.job.operation }.
	Input json.RawMessage
	// Files are the uploads, read in order, each completely before the
	// next is asked for; nil for none. A multipart body can be passed part
	// by part. An error from the sequence ends Submit with that error.
	Files iter.Seq2[Upload, error]
	// References are inputs made from existing files.
	References []Reference
	// Accept lists the media types the tool takes ("application/pdf",
	// "image/*"); a file whose sniffed type is not in it is refused. Empty
	// refuses every file.
	Accept []string
	// MaxFileBytes is the tool's size limit per file; 0 or more than
	// Config.MaxFileBytes means Config.MaxFileBytes.
	MaxFileBytes int64
	// Secrets names the top-level members of Input that are secrets (its
	// tool's schema marks them writeOnly): they are never stored in the
	// job's row nor shown, only sealed in its folder until its run starts
	// (secrets.go).
	Secrets []string
	// Check, when set, is called with the names of the job's input files
	// (its uploads and references) once they are all stored, before the
	// job is written: an error refuses the submission, nothing is left
	// behind, and Submit returns the error as it is. A multipart body's
	// files are known only once it has been read, so this is where a
	// required file that never came is refused.
	Check func(files []string) error
	// IdempotencyKey is the submission's Idempotency-Key; "" for none.
	// While a job of the same owner with the same key is younger than
	// IdempotencyWindow, Submit stores nothing and returns that job
	// (Job.Replayed), whatever this submission's input and files; the
	// submission's Slots then belong to no job. 1 to 255 printable ASCII
	// characters (ErrInvalid otherwise).
	IdempotencyKey string
	// Slots are the concurrency slots the job holds from its admission,
	// opaque to this package (the guard's encoding): stored with the job,
	// renewed through Config.Slots while it runs and released through it
	// where the job reaches a final state, by whichever process gets it
	// there. "" for none.
	Slots string
}

// Download is an open job file. The caller closes Content; it is an
// *os.File, so an HTTP layer can serve it with http.ServeContent, using
// File.CreatedAt as the modification time.
type Download struct {
	File    File
	Content *os.File
}

// Run is one run of a job, as its handler sees it. It carries no owner.
type Run struct {
	// JobID identifies the job in logs.
	JobID string
	// Type is the job type.
	Type string
	// Attempt counts the runs of the job, this one included (1 for the
	// first).
	Attempt int
	// Input is the job's input document.
	Input json.RawMessage
	// Files are the input files. They are read-only and may be hard links
	// shared with an earlier job's output: never write to them.
	Files []InputFile
	// OutDir is an empty directory the subsystem owns. Every regular file
	// the handler leaves there when it succeeds becomes an output file of
	// the job, named as it is named there; subdirectories and symbolic
	// links are refused. On failure or cancellation it is removed.
	OutDir string

	progress func(Progress)
}

// Progress reports progress. It is cheap and safe to call often and from
// any goroutine: subscribers see every report or a later one, and the job
// row is updated at most once per Config.ProgressInterval.
func (r *Run) Progress(p Progress) {
	if r.progress != nil {
		r.progress(p)
	}
}

// InputFile is an input of a run.
type InputFile struct {
	Name      string
	MediaType string
	SizeBytes int64
	// Path is the file's absolute path.
	Path string
}

// Open opens the file for reading.
func (f InputFile) Open() (*os.File, error) { return os.Open(f.Path) }

// Handler runs jobs of one type.
type Handler struct {
	// Run runs one job. It returns the result document (JSON; nil means
	// {}), or an error: a *toolerr.Error is kept as the job's error, any
	// other error becomes execution_failed (and is logged, not published).
	// Run must return soon after ctx ends: that is how Cancel and Close
	// stop it.
	Run func(ctx context.Context, run *Run) (json.RawMessage, error)
	// Retryable marks a job type whose runs may be repeated safely: a job
	// interrupted by a crash of the process, or by Close, runs again
	// (until it has started MaxAttempts runs) instead of failing.
	Retryable bool
	// MaxAttempts bounds the runs of a Retryable job that keeps being
	// interrupted; 0 means 3.
	MaxAttempts int
}

// EventKind tells state events from progress events.
type EventKind string

// The event kinds.
const (
	// EventState carries a snapshot of the job after a state change; the
	// first event of every subscription is one, with the current state.
	EventState EventKind = "state"
	// EventProgress carries a progress report of a running job.
	EventProgress EventKind = "progress"
)

// Event is one message of a job's event stream.
type Event struct {
	Kind EventKind `json:"kind"`
	// Version is the job's version the event belongs to.
	Version int64 `json:"version"`
	State   State `json:"state"`
	// Job is the snapshot, for EventState. Every subscriber gets the same
	// one: read it, do not change it.
	Job *Job `json:"job,omitempty"`
	// Progress is set for EventProgress (and in Job for EventState).
	Progress *Progress `json:"progress,omitempty"`
}

// jobDir, inDir and outDir are where a job's files live.
func (s *Service) jobDir(id string) string { return filepath.Join(s.root, id) }
func (s *Service) inDir(id string) string  { return filepath.Join(s.root, id, "in") }
func (s *Service) outDir(id string) string { return filepath.Join(s.root, id, "out") }

// filePath is where a file of a job lives.
func (s *Service) filePath(id string, role Role, name string) string {
	if role == Output {
		return filepath.Join(s.outDir(id), name)
	}
	return filepath.Join(s.inDir(id), name)
}
