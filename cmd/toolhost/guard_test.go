package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

// TestGuardCommand: a job of an anonymous caller admitted through a guard
// on the shared test Redis (as a replica's) holds a slot and spent two
// units; `guard inspect` shows them, `guard reset` frees them and says so,
// and `guard inspect` then shows nothing — and the caller is admitted
// again. The command refuses without --redis, and a CALLER it could not
// read.
func TestGuardCommand(t *testing.T) {
	url := redistest.URL(t)
	rdb := redistest.Client(t, url)
	prefix := redistest.Prefix(t)
	sems := guard.NewRedisSemaphores(rdb, prefix+"s:", 0)
	defer sems.Close()
	// A table of the replicas' own, which the command is given too.
	tbl := guard.DefaultTable()
	tbl.Classes[guard.ClassJob] = guard.Class{Anonymous: guard.Allowance{Burst: 5, PerMinute: 1, ConcurrentPerCaller: 1}}
	table := filepath.Join(t.TempDir(), "quotas.json")
	raw, err := json.Marshal(tbl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Mode: guard.Enforce, Quotas: tbl, Limiter: guard.NewRedisLimiter(rdb, prefix), Semaphores: sems})
	if err != nil {
		t.Fatal(err)
	}
	const key = "ip:203.0.113.7"
	caller := guard.Caller{Tier: guard.Anonymous, Key: key}
	job := guard.Request{QuotaClass: guard.ClassJob, Cost: 2, Anonymous: true, SlotLease: guard.JobSlotLease}
	ctx := context.Background()
	d, _ := g.Admit(ctx, caller, job)
	if !d.Allowed || len(d.Slots) != 1 {
		t.Fatalf("admitting the job: %+v", d)
	}
	if d, _ := g.Admit(ctx, caller, job); d.Allowed || d.Reason != guard.ReasonConcurrency {
		t.Fatalf("a second job of one: %+v", d)
	}

	t.Setenv("TOOLHOST_REDIS", url) // --redis from its environment variable
	t.Setenv("TOOLHOST_QUOTA_TABLE", "")
	command := func(sub string, extra ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"guard", sub, "--redis-prefix", prefix, "--quota-table", table}, extra...)
		code := run(args, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := command("inspect", "--json", key)
	if code != 0 {
		t.Fatalf("inspect --json: %d %s", code, errOut)
	}
	var h guard.Holdings
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("inspect --json: %v: %s", err, out)
	}
	if h.Key != key || len(h.Cells) != 1 {
		t.Fatalf("inspect --json: %s", out)
	}
	c := h.Cells[0]
	if c.Class != guard.ClassJob || c.Column != "anonymous" || c.Remaining != 3 || c.Burst != 5 ||
		c.FullInMS <= 60_000 || c.FullInMS > 120_000 || len(c.Slots) != 1 || c.Slots[0].Holder != d.Slots[0].Holder ||
		time.Until(c.Slots[0].Expires) <= 0 || time.Until(c.Slots[0].Expires) > guard.JobSlotLease+time.Second {
		t.Fatalf("inspect --json: %s", out)
	}

	code, out, errOut = command("inspect", key)
	if want := []string{key + ": 1 bucket(s) not full, 1 slot(s) held\n", guard.ClassJob + "/anonymous: 3 of 5 units, full in 2m0s; 1 slot(s) held of 1\n",
		"  slot " + d.Slots[0].Holder + ": lease ends "}; code != 0 || !containsAll(out, want) {
		t.Fatalf("inspect: %d %s %s", code, out, errOut)
	}

	code, out, errOut = command("reset", key)
	if want := []string{key + ": filled 1 bucket(s) up and freed 1 slot(s)\n", guard.ClassJob + "/anonymous: 3 of 5 units"}; code != 0 || !containsAll(out, want) {
		t.Fatalf("reset: %d %s %s", code, out, errOut)
	}
	code, out, errOut = command("inspect", "--json", key)
	if code != 0 || out != `{"caller":"`+key+`","cells":[]}`+"\n" {
		t.Fatalf("inspect after reset: %d %s %s", code, out, errOut)
	}
	if code, out, _ = command("inspect", key); out != key+": every bucket full, no slot held\n" {
		t.Fatalf("inspect after reset: %d %s", code, out)
	}
	if d, _ := g.Admit(ctx, caller, job); !d.Allowed || d.Limits.Limit[0] != `"`+guard.ClassJob+`";r=3;t=120` {
		t.Fatalf("the job after reset: %+v", d)
	}

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no subcommand", []string{"guard"}, 2, "inspect or reset"},
		{"another subcommand", []string{"guard", "free", key}, 2, "inspect or reset"},
		{"no caller", []string{"guard", "inspect"}, 2, "CALLER"},
		{"two callers", []string{"guard", "reset", key, "ip:203.0.113.8"}, 2, "CALLER"},
		{"no redis", []string{"guard", "inspect", "--redis", "", key}, 2, "restarting it frees them"},
		{"a bad URL", []string{"guard", "inspect", "--redis", "http://127.0.0.1:1", key}, 2, "--redis"},
		{"a caller key with a NUL", []string{"guard", "inspect", "--redis-prefix", prefix, "ip:1\x00x"}, 2, "invalid caller key"},
		{"an empty caller key", []string{"guard", "reset", "--redis-prefix", prefix, ""}, 2, "invalid caller key"},
		{"a Redis that does not answer", []string{"guard", "reset", "--redis", "redis://127.0.0.1:1/0", key}, 1, "redis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, strings.NewReader(""), &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("%q = %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.stderr)
			}
		})
	}
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
