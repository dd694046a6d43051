package jobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/internal/jobs/sniff"
	"github.com/toolhost/toolhost/internal/store"
)

// Submit stores a new job and queues it. Every file is read, size-limited
// while it is read, sniffed and checked against sub.Accept, and every
// reference is resolved, before the job exists: a refused file or reference
// leaves no job, no row and no file behind. The job row, its file rows and
// its River ticket are written in one transaction. It returns the job as
// queued.
//
// Refusals: ErrInvalid, ErrUnknownType, a *FileError (ErrFileType,
// ErrTooLarge, ErrReference, ErrExpired, ErrNoMediaStore) naming the input,
// and ErrStorageFull: before anything is read when the free space is below
// Config.MinFreeBytes, and whenever a write of the files or the rows fails
// for lack of space, its partial files removed and its rows rolled back.
//
// The database statements (the transaction, and the read of each job-file
// reference) are bounded by [store.Budget], the reading of the uploads is
// not: when the database is locked past the budget (by another process, or
// an in-process writer that holds it), the submission is refused with an
// error wrapping [store.ErrBusy], its files removed and its rows rolled
// back, instead of waiting out [store.BusyTimeout].
//
// With sub.IdempotencyKey, a job of the owner with that key younger than
// IdempotencyWindow is returned instead, marked Replayed, and the
// submission is dropped as a refusal is (its files removed, no row, its
// Slots not taken by any job: the caller releases them); of two
// concurrent submissions with one key, one makes the job and the other
// replays it. An older job with the key loses it to the new one.
func (s *Service) Submit(ctx context.Context, sub Submission) (*Job, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	if sub.Owner == "" {
		return nil, fmt.Errorf("%w: no owner", ErrInvalid)
	}
	if sub.IdempotencyKey != "" && !validIdempotencyKey(sub.IdempotencyKey) {
		return nil, fmt.Errorf("%w: the Idempotency-Key is not 1 to %d printable ASCII characters", ErrInvalid, maxIdempotencyKeyBytes)
	}
	if _, ok := s.handler(sub.Type); !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownType, sub.Type)
	}
	input := bytes.TrimSpace(sub.Input)
	switch {
	case len(input) > s.cfg.MaxInputBytes:
		return nil, fmt.Errorf("%w: the input has more than %d bytes", ErrInvalid, s.cfg.MaxInputBytes)
	case len(input) == 0 || input[0] != '{' || !json.Valid(input):
		return nil, fmt.Errorf("%w: the input is not a JSON object", ErrInvalid)
	}
	limit := s.cfg.MaxFileBytes
	if sub.MaxFileBytes > 0 && sub.MaxFileBytes < limit {
		limit = sub.MaxFileBytes
	}
	// A write that failed keeps the folder full for the workers and
	// /readyz until the next check; a submission is refused on the
	// threshold alone, and tries its writes otherwise.
	if st := s.checkStorage(false); st.Full && st.Reason == ReasonBelowThreshold {
		return nil, fmt.Errorf("%w: %s has %d bytes free, less than %d", ErrStorageFull, st.Folder, st.FreeBytes, st.MinFreeBytes)
	}

	id := newID()
	s.mu.Lock()
	s.pending[id] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	input, secrets, err := splitSecrets(input, sub.Secrets)
	if err != nil {
		return nil, err
	}
	job, err := s.submit(ctx, id, sub, input, secrets, limit)
	if err != nil {
		if rmErr := os.RemoveAll(s.jobDir(id)); rmErr != nil {
			s.log.Error("jobs: removing the files of a refused submission", "job", id, "error", rmErr)
		}
		var rep *replay
		if errors.As(err, &rep) {
			// Its Idempotency-Key names an earlier job: that one is the
			// answer, and nothing of this submission is kept.
			return s.replayed(ctx, rep.id, sub.Owner)
		}
		// After the removal, so that the condition it records is the
		// folder's without the partial files.
		return nil, s.storageErr(err)
	}
	return job, nil
}

// submit is Submit once the job has an id: files, then rows and ticket.
func (s *Service) submit(ctx context.Context, id string, sub Submission, input, secrets []byte, limit int64) (*Job, error) {
	if err := os.MkdirAll(s.inDir(id), 0o700); err != nil {
		return nil, fmt.Errorf("creating job %s's directory: %w", id, err)
	}
	if secrets != nil {
		if err := s.sealSecrets(id, secrets); err != nil {
			return nil, err
		}
	}
	var files []File
	names := map[string]bool{}
	claim := func(name string) error {
		switch {
		case !validName(name):
			return &FileError{Name: name, Err: ErrInvalid, Cause: errors.New("not a valid file name")}
		case names[name]:
			return &FileError{Name: name, Err: ErrInvalid, Cause: errors.New("the name is used twice")}
		case len(names) == s.cfg.MaxFiles:
			return fmt.Errorf("%w: more than %d files", ErrInvalid, s.cfg.MaxFiles)
		}
		names[name] = true
		return nil
	}
	if sub.Files != nil {
		for up, err := range sub.Files {
			if err != nil {
				return nil, fmt.Errorf("reading the uploads: %w", err)
			}
			if err := claim(up.Name); err != nil {
				return nil, err
			}
			if up.Content == nil {
				return nil, &FileError{Name: up.Name, Err: ErrInvalid, Cause: errors.New("no content")}
			}
			f, err := s.storeFile(s.inDir(id), up.Name, up.Content, sub.Accept, limit)
			if err != nil {
				return nil, err
			}
			f.Source = "upload"
			files = append(files, f)
		}
	}
	refs := make([]Reference, 0, len(sub.References))
	for _, ref := range sub.References {
		ref, f, err := s.resolve(ctx, id, sub, ref, limit, claim)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
		files = append(files, f)
	}
	if sub.Check != nil {
		if err := sub.Check(slices.Sorted(maps.Keys(names))); err != nil {
			return nil, err
		}
	}
	for _, dir := range []string{s.inDir(id), s.jobDir(id), s.root} {
		if err := syncDir(dir); err != nil {
			return nil, err
		}
	}
	refsJSON, err := json.Marshal(refs)
	if err != nil {
		return nil, fmt.Errorf("encoding the references: %w", err)
	}

	// The files are on disk; from here the statements of the request run
	// under one budget, and a database too busy to take them in time
	// refuses the submission (Submit then removes the files).
	created := fmtTime(s.cfg.Now())
	bctx, cancel := store.Budget(ctx)
	defer cancel()
	err = s.withTx(bctx, func(tx *txn) error {
		if sub.IdempotencyKey != "" {
			if err := s.claimIdempotencyKey(bctx, tx, sub.Owner, sub.IdempotencyKey); err != nil {
				return err
			}
		}
		if err := s.rows.InsertJob(bctx, tx.Tx, store.NewJob{ID: id, Type: sub.Type, Owner: sub.Owner, Input: string(input),
			Refs: string(refsJSON), InputFiles: len(files), CreatedAt: created, Slots: sub.Slots,
			IdempotencyKey: sub.IdempotencyKey}); err != nil {
			return fmt.Errorf("inserting job %s: %w", id, err)
		}
		for _, f := range files {
			if err := s.rows.InsertInputFile(bctx, tx.Tx, id, store.JobFileRecord{Name: f.Name, MediaType: f.MediaType,
				SizeBytes: f.SizeBytes, SHA256: f.SHA256, Source: f.Source, CreatedAt: created}); err != nil {
				return fmt.Errorf("inserting job %s's file: %w", id, err)
			}
		}
		return s.newTicket(bctx, tx, id, sub.Type)
	})
	if err != nil && sub.IdempotencyKey != "" {
		err = s.replayAfter(ctx, sub.Owner, sub.IdempotencyKey, err)
	}
	if err != nil {
		return nil, busy(bctx, err)
	}
	// Committed: the job exists, and nothing may fail now (a failure
	// would make Submit remove the files of a stored job). It is
	// returned as it was written, without reading it back.
	return queuedJob(id, sub, input, refs, files, created)
}

// queuedJob is job id as submit wrote it: queued, its files by name, as
// loadJob would read it.
func queuedJob(id string, sub Submission, input []byte, refs []Reference, files []File, created string) (*Job, error) {
	at, err := parseTime(created)
	if err != nil {
		return nil, err
	}
	for i := range files {
		files[i].Role, files[i].CreatedAt = Input, at
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	if files == nil {
		files = []File{}
	}
	return &Job{ID: id, Type: sub.Type, Owner: sub.Owner, State: Queued, Input: json.RawMessage(input),
		Files: files, References: refs, Version: 1, CreatedAt: at}, nil
}

// resolve makes the input file of one reference in job id's input folder.
func (s *Service) resolve(ctx context.Context, id string, sub Submission, ref Reference, limit int64, claim func(string) error) (Reference, File, error) {
	switch {
	case ref.Media != "" && (ref.Job != "" || ref.File != ""):
		return ref, File{}, fmt.Errorf("%w: a reference names a media object and a job file", ErrInvalid)
	case ref.Media != "":
		if ref.Name == "" {
			ref.Name = ref.Media
		}
		if err := claim(ref.Name); err != nil {
			return ref, File{}, err
		}
		if s.cfg.Media == nil {
			return ref, File{}, &FileError{Name: ref.Name, Err: ErrNoMediaStore}
		}
		rc, err := s.cfg.Media.OpenMedia(ctx, sub.Owner, ref.Media)
		if err != nil {
			return ref, File{}, &FileError{Name: ref.Name, Err: ErrReference, Cause: err}
		}
		defer rc.Close() //nolint:errcheck // read-only: nothing to lose
		f, err := s.storeFile(s.inDir(id), ref.Name, rc, sub.Accept, limit)
		if err != nil {
			return ref, File{}, err
		}
		f.Source = "media:" + ref.Media
		return ref, f, nil
	case ref.Job != "" && ref.File != "":
		if ref.Name == "" {
			ref.Name = ref.File
		}
		if err := claim(ref.Name); err != nil {
			return ref, File{}, err
		}
		f, err := s.linkJobFile(ctx, id, sub, ref, limit)
		return ref, f, err
	default:
		return ref, File{}, fmt.Errorf("%w: a reference names neither a media object nor a job and file", ErrInvalid)
	}
}

// linkJobFile makes ref, a result file of an earlier job, an input of job
// id: a hard link to it (a copy where links fail), so that neither file's
// expiry depends on the other's. The earlier job must belong to the same
// owner, the file must be an output that has not expired, and its sniffed
// type must be accepted.
func (s *Service) linkJobFile(ctx context.Context, id string, sub Submission, ref Reference, limit int64) (File, error) {
	refused := &FileError{Name: ref.Name, Err: ErrReference}
	bctx, cancel := store.Budget(ctx)
	rec, err := s.rows.LookupReferencedFile(bctx, ref.Job, ref.File)
	cancel()
	src := File{MediaType: rec.MediaType, SizeBytes: rec.SizeBytes, SHA256: rec.SHA256}
	role, owner, expires := rec.Role, rec.Owner, rec.ExpiresAt
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return File{}, refused
	case err != nil:
		return File{}, busy(bctx, fmt.Errorf("reading a referenced file: %w", err))
	case owner != sub.Owner || Role(role) != Output:
		// Another owner's file is refused exactly as a missing one is.
		return File{}, refused
	}
	expiresAt, err := optTime(expires)
	if err != nil {
		return File{}, fmt.Errorf("reading a referenced file: %w", err)
	}
	if expiresAt != nil && !s.cfg.Now().Before(*expiresAt) {
		return File{}, &FileError{Name: ref.Name, Err: ErrExpired}
	}
	if !sniff.Accepts(sub.Accept, src.MediaType) {
		return File{}, &FileError{Name: ref.Name, Err: ErrFileType, MediaType: src.MediaType}
	}
	if src.SizeBytes > limit {
		return File{}, &FileError{Name: ref.Name, Err: ErrTooLarge, LimitBytes: limit}
	}
	from := s.filePath(ref.Job, Output, ref.File)
	to := filepath.Join(s.inDir(id), ref.Name)
	if err := os.Link(from, to); err != nil {
		// Not linkable (another file system, say): copy, which checks
		// the bytes again.
		in, err := os.Open(from)
		if errors.Is(err, os.ErrNotExist) {
			// Swept between the row's read and now.
			return File{}, &FileError{Name: ref.Name, Err: ErrExpired}
		}
		if err != nil {
			return File{}, fmt.Errorf("opening a referenced file: %w", err)
		}
		defer in.Close() //nolint:errcheck // read-only file: nothing to lose
		f, err := s.storeFile(s.inDir(id), ref.Name, in, sub.Accept, limit)
		if err != nil {
			return File{}, err
		}
		f.Source = "job:" + ref.Job + "/" + ref.File
		return f, nil
	}
	return File{Name: ref.Name, Role: Input, MediaType: src.MediaType, SizeBytes: src.SizeBytes, SHA256: src.SHA256,
		Source: "job:" + ref.Job + "/" + ref.File}, nil
}

// storeFile writes r as dir/name, reading at most limit bytes: past that it
// stops and fails with ErrTooLarge. The type is sniffed from the first
// bytes and checked against accept before the rest is read. The file is
// synced and made read-only.
func (s *Service) storeFile(dir, name string, r io.Reader, accept []string, limit int64) (File, error) {
	lr := &limitedReader{r: r, left: limit}
	head := make([]byte, sniff.HeadBytes)
	n, err := io.ReadFull(lr, head)
	switch {
	case errors.Is(err, errTooLarge):
		return File{}, &FileError{Name: name, Err: ErrTooLarge, LimitBytes: limit}
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
		return File{}, &FileError{Name: name, Err: ErrInvalid, Cause: err}
	}
	head = head[:n]
	media := sniff.Detect(head)
	if !sniff.Accepts(accept, media) {
		return File{}, &FileError{Name: name, Err: ErrFileType, MediaType: media}
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return File{}, fmt.Errorf("creating %s: %w", path, err)
	}
	defer f.Close() //nolint:errcheck // after the explicit, checked Close below, a no-op
	h := sha256.New()
	// A failed write is the folder's failure (no room, say), not the
	// upload's: it is told apart from a read error of the upload.
	fw := &writeRecorder{w: f}
	w := io.MultiWriter(fw, h)
	if _, err := w.Write(head); err != nil {
		return File{}, fmt.Errorf("writing %s: %w", path, err)
	}
	size := int64(n)
	if n == sniff.HeadBytes {
		m, err := io.Copy(w, lr)
		size += m
		switch {
		case fw.err != nil:
			return File{}, fmt.Errorf("writing %s: %w", path, fw.err)
		case errors.Is(err, errTooLarge):
			return File{}, &FileError{Name: name, Err: ErrTooLarge, LimitBytes: limit}
		case err != nil:
			return File{}, &FileError{Name: name, Err: ErrInvalid, Cause: err}
		}
	}
	if err := f.Sync(); err != nil {
		return File{}, fmt.Errorf("syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return File{}, fmt.Errorf("closing %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		return File{}, fmt.Errorf("making %s read-only: %w", path, err)
	}
	return File{Name: name, Role: Input, MediaType: media, SizeBytes: size, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// writeRecorder is a writer that keeps the first error of w.
type writeRecorder struct {
	w   io.Writer
	err error
}

func (r *writeRecorder) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// errTooLarge is limitedReader's error past its limit.
var errTooLarge = errors.New("jobs: read past the size limit")

// limitedReader reads at most left bytes from r; a read that would go past
// them fails with errTooLarge, so the limit is enforced while reading, and
// nothing past limit+1 bytes is ever read.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}

// validName reports whether name can name a job file: 1 to 255 bytes of
// UTF-8, no slash, backslash, NUL or other control character, not starting
// with a dot (so neither "." nor ".." nor a hidden file).
func validName(name string) bool {
	if name == "" || len(name) > 255 || name[0] == '.' || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// syncDir flushes dir's entries to disk, so that files written in it
// survive a crash once the job row that names them is committed.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close() //nolint:errcheck // read-only directory: nothing to lose
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
