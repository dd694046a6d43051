package server_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolhost/toolhost/internal/server"
)

// mountTmpfs mounts a tmpfs of size bytes on dir (made if missing) and
// unmounts it when the test ends, after the server the test starts later
// has stopped. It skips the test where mounting is not allowed.
func mountTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size))
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		t.Skipf("mounting a tmpfs is not allowed here (%v): the full-disk test needs one", err)
	}
	if err != nil {
		t.Fatalf("mounting a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
}

// fillTo writes dir/filler.bin until dir's file system has at most leave
// bytes free, and returns its path.
func fillTo(t *testing.T, dir string, leave int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler.bin")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 256<<10)
	for {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		n := int64(st.Bavail)*int64(st.Bsize) - leave
		if n <= 0 {
			return path
		}
		if _, err := f.Write(chunk[:min(n, int64(len(chunk)))]); err != nil {
			if errors.Is(err, unix.ENOSPC) {
				return path
			}
			t.Fatal(err)
		}
	}
}

// jobsLeft counts the job rows of the database in data, read-only, and
// lists the job folders.
func jobsLeft(t *testing.T, data string) (rows int, dirs []string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, server.DatabaseFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT count(*) FROM jobs`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(data, "jobs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	slices.Sort(dirs)
	return rows, dirs
}

// TestStorageFull: a server whose data folder (database and job files, a
// tmpfs) fills up refuses job submissions — JSON and multipart uploads —
// with 507 tools.job.storage_full and keeps nothing of them; /readyz is 503
// with a storage check naming the folder; a job queued before waits queued
// with storage_full as its reason. Once there is room, /readyz is 200, the
// queued job runs by itself, and a new submission succeeds.
func TestStorageFull(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	mountTmpfs(t, data, 32<<20)
	const minFree = 4 << 20
	r := startConfigured(t, nil, true, func(c *server.Config) {
		c.DataDir = data
		c.Natives = testNatives()
		c.Jobs = server.JobsConfig{PollInterval: 50 * time.Millisecond, MaxWorkers: 1,
			MinFreeBytes: minFree, StorageInterval: 50 * time.Millisecond}
	})
	sleep := func(ms int) (int, http.Header, []byte) {
		return r.do("POST", "/api/v1/jobs", r.token, fmt.Appendf(nil, `{"type":"test","input":{"tool":"sleep","ms":%d}}`, ms))
	}
	if status, _, body := r.do("GET", "/readyz", "", nil); status != http.StatusOK {
		t.Fatalf("/readyz with room: %d %s", status, body)
	}
	running := r.submitSleeper(r.token, 1500)
	eventually(t, "the first job runs", func() bool { return r.job(running, r.token).State == "running" })
	queued := r.submitSleeper(r.token, 10)
	rows, dirs := jobsLeft(t, data)

	filler := fillTo(t, data, 1<<20)
	status, h, body := sleep(10)
	problemCode(t, "a submission with the folder full", status, h, body, http.StatusInsufficientStorage, "tools.job.storage_full")
	status, h, body = r.doMultipart("/api/v1/tools/pdf_protect/run", r.token,
		part{name: "input", content: []byte(`{"user_password":"a","owner_password":"b"}`)},
		part{name: "file", content: readPDF(t, "letter_3pages.pdf"), file: true})
	problemCode(t, "an upload with the folder full", status, h, body, http.StatusInsufficientStorage, "tools.job.storage_full")
	if rowsNow, dirsNow := jobsLeft(t, data); rowsNow != rows || !slices.Equal(dirsNow, dirs) {
		t.Errorf("refused submissions left rows %d → %d, folders %v → %v", rows, rowsNow, dirs, dirsNow)
	}

	status, _, body = r.do("GET", "/readyz", "", nil)
	var ready struct {
		Status string `json:"status"`
		Checks struct {
			Storage struct {
				Full         bool   `json:"full"`
				Folder       string `json:"folder"`
				FreeBytes    int64  `json:"free_bytes"`
				MinFreeBytes int64  `json:"min_free_bytes"`
				Reason       string `json:"reason"`
			} `json:"storage"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(body, &ready); err != nil || status != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the folder full: %d %s", status, body)
	}
	if s := ready.Checks.Storage; ready.Status != "storage_full" || !s.Full || s.Folder != filepath.Join(data, "jobs") ||
		s.FreeBytes >= minFree || s.MinFreeBytes != minFree || s.Reason != "below_threshold" {
		t.Errorf("/readyz with the folder full: %s", body)
	}

	// The running job ends as it can: recorded (the database had room),
	// or failed for lack of room; never left running.
	if d := r.final(running); d.State != "succeeded" && (d.State != "failed" || d.Error == nil || d.Error.Code != "storage_full") {
		t.Errorf("the job that ran while the folder filled: %+v", d)
	}
	eventually(t, "the queued job shows why it waits", func() bool {
		d := r.job(queued, r.token)
		return d.State == "queued" && d.Error != nil && d.Error.Code == "storage_full"
	})
	time.Sleep(300 * time.Millisecond) // many checks and polls
	if d := r.job(queued, r.token); d.State != "queued" || d.Attempts != 0 {
		t.Fatalf("the queued job while the folder is full: %+v", d)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/readyz is 200 again", func() bool {
		status, _, _ := r.do("GET", "/readyz", "", nil)
		return status == http.StatusOK
	})
	if d := r.final(queued); d.State != "succeeded" || d.Error != nil || d.Result["slept"] != float64(10) {
		t.Errorf("the queued job once there is room: %+v", d)
	}
	if d := r.final(r.submitSleeper(r.token, 10)); d.State != "succeeded" {
		t.Errorf("a submission once there is room: %+v", d)
	}
}
