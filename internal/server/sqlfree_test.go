//go:build toolhost_count

package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/store"
)

// TestSQLFreeRunPath (issue 13, item 2: "No SQLite statement on the sync
// run path"): after one warm-up run with an app token, n sync runs of hash
// with that token within its quota, n over its quota in report mode (each
// an abuse event), and n anonymous runs over the anonymous quota send no
// statement to SQLite from the goroutines that serve them, nor from any
// goroutine but the store's background writers (the abuse log's and the
// job runner's, named below). The store's statement counter needs the
// toolhost_count build tag:
//
//	go test -count=1 -tags toolhost_count -run SQLFree ./internal/server
func TestSQLFreeRunPath(t *testing.T) {
	cost := hashCost(t)
	clock := &guardClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r := startConfigured(t, bundled(t), false, func(c *server.Config) {
		// Report mode, a tiny quota (5 runs for an app, 2 anonymous) and a
		// frozen guard clock: every run past the quota is let through and
		// recorded in the abuse log.
		c.Guard = server.GuardConfig{Mode: guard.Report, Quotas: smallTable(cost), Now: clock.Now}
	})
	ctx := context.Background()
	app, err := r.srv.Accounts().CreateAppToken(ctx, "sqlfree", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, c cred) {
		t.Helper()
		status, _, body := r.send("POST", "/api/v1/tools/hash/run", c, []byte(hashRun))
		var res struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(body, &res); status != http.StatusOK || err != nil || res.Status != "succeeded" {
			t.Fatalf("%s: %d %s", name, status, body)
		}
	}
	// The warm-up resolves the token (a read, and the last_used_at write)
	// and leaves it in the credential cache.
	run("warm-up", cred{bearer: app})

	const n = 50
	store.StartCounting()
	for range 4 { // the rest of the app's quota of 5
		run("a run within the quota", cred{bearer: app})
	}
	for range n {
		run("a run over the quota, reported", cred{bearer: app})
	}
	for range n {
		run("an anonymous run", cred{})
	}
	stmts := store.StopCounting()

	// The runs past the quotas were abuse events (2 anonymous runs were
	// within theirs): the test counted what it meant to.
	rows, err := r.srv.Abuse().List(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reported int64
	for _, row := range rows {
		// The refusals reported, not the quota-streak rule rows
		// (run.RuleQuotaStreak) their runs in a row add.
		if row.Reported && !strings.HasPrefix(row.Reason, "rule.") {
			reported += row.Count
		}
	}
	if reported != 2*n-2 {
		t.Fatalf("%d reported abuse events, want %d: %+v", reported, 2*n-2, rows)
	}
	var path, other []store.Statement
	for _, st := range stmts {
		switch {
		case st.OnStack("net/http.(*conn).serve"):
			path = append(path, st)
		case !background(st):
			other = append(other, st)
		}
	}
	for _, st := range path {
		t.Errorf("a statement on a request's goroutine: %v\n\t%s", st, strings.Join(st.Stack, "\n\t"))
	}
	for _, st := range other {
		t.Errorf("a statement from a goroutine that is not a background writer: %v\n\t%s", st, strings.Join(st.Stack, "\n\t"))
	}
	t.Logf("%d statements while counting, from background writers", len(stmts))
}

// background reports whether st was sent by one of the store's background
// writers, whose work is off every request's path: the abuse log's writer
// and the job queue's own goroutines (River's producer, notifier and
// maintenance services poll the database).
func background(st store.Statement) bool {
	for _, f := range st.Stack {
		if strings.HasPrefix(f, "github.com/toolhost/toolhost/internal/abuse.(*Log).loop (") || strings.HasPrefix(f, "github.com/riverqueue/river") {
			return true
		}
	}
	return false
}
