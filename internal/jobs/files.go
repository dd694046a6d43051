package jobs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/toolhost/toolhost/internal/store"
)

// OpenFile opens file name of job id for its owner. Another owner's file,
// or one that does not exist or has been swept, is ErrNotFound; one past its
// expiry but not yet swept is ErrExpired.
func (s *Service) OpenFile(ctx context.Context, id, name, owner string) (*Download, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	f, fileOwner, err := s.fileRow(ctx, id, name)
	if err != nil {
		return nil, err
	}
	if owner == "" || fileOwner != owner {
		return nil, ErrNotFound
	}
	return s.open(id, f)
}

// fileRow reads file name of job id and its owner, under a [store.Budget]
// of its own: a database too busy to answer is an error wrapping
// [store.ErrBusy].
func (s *Service) fileRow(ctx context.Context, id, name string) (File, string, error) {
	ctx, cancel := store.Budget(ctx)
	defer cancel()
	rec, owner, err := s.rows.LookupJobFile(ctx, id, name)
	if errors.Is(err, sql.ErrNoRows) {
		return File{}, "", ErrNotFound
	}
	var f File
	if err == nil {
		f, err = fileOf(rec)
	}
	if err != nil {
		return File{}, "", busy(ctx, fmt.Errorf("reading file %q of job %s: %w", name, id, err))
	}
	return f, owner, nil
}

// open opens f of job id unless it has expired.
func (s *Service) open(id string, f File) (*Download, error) {
	if f.ExpiresAt != nil && !s.cfg.Now().Before(*f.ExpiresAt) {
		return nil, ErrExpired
	}
	fh, err := os.Open(s.filePath(id, f.Role, f.Name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound // swept meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("opening file %q of job %s: %w", f.Name, id, err)
	}
	return &Download{File: f, Content: fh}, nil
}

// SignedURL returns a download URL for file name of job id, which its
// owner asks for: URLPrefix/<id>/files/<name>?expires=<unix seconds>&sig=…,
// valid for ttl and never past the file's own expiry, which it also
// returns. Anyone holding the URL may download the file until then
// (OpenSigned); changing any part of it invalidates the signature. The
// signature is HMAC-SHA256 under Config.SigningKey.
func (s *Service) SignedURL(ctx context.Context, id, name, owner string, ttl time.Duration) (string, time.Time, error) {
	if s.isClosed() {
		return "", time.Time{}, ErrClosed
	}
	if ttl <= 0 {
		return "", time.Time{}, fmt.Errorf("%w: a signed URL's lifetime must be positive", ErrInvalid)
	}
	f, fileOwner, err := s.fileRow(ctx, id, name)
	if err != nil {
		return "", time.Time{}, err
	}
	if owner == "" || fileOwner != owner {
		return "", time.Time{}, ErrNotFound
	}
	now := s.cfg.Now()
	if f.ExpiresAt != nil && !now.Before(*f.ExpiresAt) {
		return "", time.Time{}, ErrExpired
	}
	until := now.Add(ttl)
	if f.ExpiresAt != nil && f.ExpiresAt.Before(until) {
		until = *f.ExpiresAt
	}
	expires := until.Unix() // rounds down: never later than asked
	u := fmt.Sprintf("%s/%s/files/%s?%s", s.cfg.URLPrefix, url.PathEscape(id), url.PathEscape(name), url.Values{
		"expires": {strconv.FormatInt(expires, 10)},
		"sig":     {s.sign(id, name, expires)},
	}.Encode())
	return u, time.Unix(expires, 0), nil
}

// sign is the signature of a download of file name of job id until expires
// (unix seconds). Neither an id nor a name can hold a NUL, so the message
// is unambiguous.
func (s *Service) sign(id, name string, expires int64) string {
	m := hmac.New(sha256.New, s.key)
	m.Write(fmt.Appendf(nil, "github.com/toolhost/toolhost/jobs/file/v1\x00%s\x00%s\x00%d", id, name, expires))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// VerifySigned checks a signed URL's parts: the job id and file name of its
// path and its expires and sig query values. A signature that does not
// match (a part changed, another key) is ErrSignature, checked first; a
// valid one whose time has passed is ErrExpired.
func (s *Service) VerifySigned(id, name, expires, sig string) error {
	n, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != expires {
		return ErrSignature
	}
	if !hmac.Equal([]byte(s.sign(id, name, n)), []byte(sig)) {
		return ErrSignature
	}
	if !s.cfg.Now().Before(time.Unix(n, 0)) {
		return ErrExpired
	}
	return nil
}

// OpenSigned opens file name of job id for whoever holds a valid signed URL
// for it (see VerifySigned); the file itself must not have expired.
func (s *Service) OpenSigned(ctx context.Context, id, name, expires, sig string) (*Download, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	if err := s.VerifySigned(id, name, expires, sig); err != nil {
		return nil, err
	}
	f, _, err := s.fileRow(ctx, id, name)
	if err != nil {
		return nil, err
	}
	return s.open(id, f)
}

// sweepBatch is how many rows one sweep statement takes.
const sweepBatch = 256

// Sweep deletes the files past their expiry, from disk and then their rows,
// and the finished jobs older than JobRetention with whatever they still
// hold. The sweeper calls it every SweepInterval; calling it as well is
// harmless. A file that cannot be removed stops the sweep with an error and
// keeps its row, so the next sweep tries again.
func (s *Service) Sweep(ctx context.Context) error {
	if s.isClosed() {
		return ErrClosed
	}
	now := s.cfg.Now()
	for {
		n, err := s.sweepFiles(ctx, fmtTime(now))
		if err != nil {
			return err
		}
		if n < sweepBatch {
			break
		}
	}
	for {
		n, err := s.sweepJobs(ctx, fmtTime(now.Add(-s.cfg.JobRetention)))
		if err != nil {
			return err
		}
		if n < sweepBatch {
			break
		}
	}
	return nil
}

// sweepFiles removes up to sweepBatch files that expired at or before now
// and returns how many it removed.
func (s *Service) sweepFiles(ctx context.Context, now string) (int, error) {
	expired, err := s.rows.ListExpiredFiles(ctx, now, sweepBatch)
	if err != nil {
		return 0, fmt.Errorf("listing expired files: %w", err)
	}
	for _, k := range expired {
		if err := os.Remove(s.filePath(k.JobID, Role(k.Role), k.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("removing an expired file: %w", err)
		}
	}
	err = s.withTx(ctx, func(tx *txn) error {
		for _, k := range expired {
			if err := s.rows.DeleteExpiredFile(ctx, tx.Tx, k.JobID, k.Name, now); err != nil {
				return fmt.Errorf("deleting an expired file's row: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range expired {
		for _, dir := range []string{s.inDir(k.JobID), s.outDir(k.JobID), s.jobDir(k.JobID)} {
			os.Remove(dir) //nolint:errcheck // empty directories go; ones still holding files stay
		}
	}
	return len(expired), nil
}

// sweepJobs deletes up to sweepBatch final jobs finished at or before
// cutoff, their directories first, and returns how many it deleted.
func (s *Service) sweepJobs(ctx context.Context, cutoff string) (int, error) {
	ids, err := s.rows.ListOldJobs(ctx, cutoff, sweepBatch)
	if err != nil {
		return 0, fmt.Errorf("listing old jobs: %w", err)
	}
	for _, id := range ids {
		if err := os.RemoveAll(s.jobDir(id)); err != nil {
			return 0, fmt.Errorf("removing an old job's files: %w", err)
		}
	}
	err = s.withTx(ctx, func(tx *txn) error {
		for _, id := range ids {
			if err := s.rows.DeleteOldJob(ctx, tx.Tx, id, cutoff); err != nil {
				return fmt.Errorf("deleting an old job: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(ids), nil
}

// sweepOrphans removes the directories under the jobs directory that belong
// to no job: the files of a submission the process died in the middle of.
// It runs at Open, when nothing is being submitted.
func (s *Service) sweepOrphans(ctx context.Context) error {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return fmt.Errorf("listing the jobs directory: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name()[0] == '.' {
			continue
		}
		exists, err := s.rows.JobExists(ctx, e.Name())
		if err != nil {
			return fmt.Errorf("checking the jobs directory: %w", err)
		}
		if !exists {
			s.log.Warn("jobs: removing the files of an unfinished submission", "job", e.Name())
			if err := os.RemoveAll(s.jobDir(e.Name())); err != nil {
				return fmt.Errorf("removing an orphan job directory: %w", err)
			}
		}
	}
	return nil
}

// sweepLoop runs Sweep every SweepInterval until Close.
func (s *Service) sweepLoop(ctx context.Context) {
	defer s.sweepWG.Done()
	t := time.NewTicker(s.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Sweep(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
				s.log.Error("jobs: sweeping", "error", err)
			}
		}
	}
}
