package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/guard"
	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/server"
)

// guardTime is the format of the leases' ends `guard` prints: UTC, to
// the millisecond.
const guardTime = "2006-01-02T15:04:05.000Z"

// guardCommandTimeout bounds a whole `guard inspect` or `guard reset`:
// some fifty round trips to Redis, each bounded by the guard's own
// timeout.
const guardCommandTimeout = 30 * time.Second

// runGuard is `guard inspect|reset CALLER`: what the replicas' shared
// guard (serve --redis) holds of one caller key — its quota buckets that
// are not full and its own concurrency slots, in every class and column
// of the quota table (--quota-table, as serve is given it) — or, with
// reset, frees them all and prints what it freed. CALLER is the key as
// the guard spells it: ip:ADDRESS (an IPv6 address by its /64),
// s:SESSION, p:PRINCIPAL. Without --redis the guard's state lives in the
// serving process, which this command cannot reach: it is a usage error.
// Text by default, one canonical JSON object with --json.
func runGuard(args []string, stdout io.Writer) (err error) {
	if len(args) == 0 || (args[0] != "inspect" && args[0] != "reset") {
		return fmt.Errorf("%w: guard takes the subcommand inspect or reset", errUsage)
	}
	sub := args[0]
	fs := flag.NewFlagSet("guard "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := newOptions(fs)
	redisURL := o.String("redis")
	quotaFile := o.String("quota-table")
	prefix := fs.String("redis-prefix", server.RedisPrefix, "the `prefix` of the guard's keys in Redis: serve's unless one Redis holds several deployments or tests")
	asJSON := fs.Bool("json", false, "print canonical JSON instead of text")
	rest, err := o.parse(args[1:], true)
	if err != nil || len(rest) != 1 {
		return usageOr(err, fmt.Errorf("%w: guard %s takes a CALLER key (ip:ADDRESS, s:SESSION, p:PRINCIPAL)", errUsage, sub))
	}
	caller := rest[0]
	if *redisURL == "" {
		return fmt.Errorf("%w: guard %s needs --redis (TOOLHOST_REDIS): without Redis the guard's buckets and slots live in the serving process, which nothing outside it can read or free — restarting it frees them", errUsage, sub)
	}
	table := guard.DefaultTable()
	if *quotaFile != "" {
		if table, err = guard.LoadTable(*quotaFile); err != nil {
			return fmt.Errorf("%w: --quota-table: %v", errUsage, err)
		}
	}
	rdb, err := redisconn.Open(*redisURL)
	if err != nil {
		return fmt.Errorf("%w: --redis: %v", errUsage, err)
	}
	defer closeReporting(&err, rdb.Close)
	ctx, cancel := context.WithTimeout(context.Background(), guardCommandTimeout)
	defer cancel()
	if err := redisconn.Ping(ctx, rdb); err != nil {
		return err
	}
	// The semaphores as serve keeps them (server.openShared); this
	// process takes no slot, so their renewing goroutine has nothing to
	// renew.
	sems := guard.NewRedisSemaphores(rdb, *prefix+"s:", 0)
	defer closeReporting(&err, sems.Close)
	g, err := guard.New(guard.Config{Mode: guard.Enforce, Quotas: table,
		Limiter: guard.NewRedisLimiter(rdb, *prefix), Semaphores: sems})
	if err != nil {
		return err
	}
	var h guard.Holdings
	if sub == "inspect" {
		h, err = g.Inspect(ctx, caller)
	} else {
		h, err = g.Reset(ctx, caller)
	}
	if errors.Is(err, guard.ErrCallerKey) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err != nil {
		return fmt.Errorf("guard %s %s: %w", sub, caller, err)
	}
	if *asJSON {
		return printCanonical(stdout, h)
	}
	return printHoldings(stdout, h, sub == "reset", time.Now())
}

// printHoldings writes h as text: a line for the caller, then one a class
// and column, and under it one a slot held. freed says h is what a reset
// freed.
func printHoldings(w io.Writer, h guard.Holdings, freed bool, now time.Time) error {
	buckets, slots := 0, 0
	for _, c := range h.Cells {
		if c.FullInMS > 0 {
			buckets++
		}
		slots += len(c.Slots)
	}
	var b strings.Builder
	switch {
	case freed:
		fmt.Fprintf(&b, "%s: filled %d bucket(s) up and freed %d slot(s)\n", h.Key, buckets, slots)
	case len(h.Cells) == 0:
		fmt.Fprintf(&b, "%s: every bucket full, no slot held\n", h.Key)
	default:
		fmt.Fprintf(&b, "%s: %d bucket(s) not full, %d slot(s) held\n", h.Key, buckets, slots)
	}
	for _, c := range h.Cells {
		line := fmt.Sprintf("%s/%s: %d of %d units", c.Class, c.Column, c.Remaining, c.Burst)
		if c.FullInMS > 0 {
			line += ", full in " + (time.Duration(c.FullInMS) * time.Millisecond).Round(time.Second).String()
		}
		if len(c.Slots) > 0 {
			line += fmt.Sprintf("; %d slot(s) held", len(c.Slots))
			if c.ConcurrentPerCaller > 0 {
				line += fmt.Sprintf(" of %d", c.ConcurrentPerCaller)
			}
		}
		b.WriteString(line + "\n")
		for _, sl := range c.Slots {
			lease := "no lease (a run of the process holding it)"
			if !sl.Expires.IsZero() {
				lease = fmt.Sprintf("lease ends %s (in %s)", sl.Expires.UTC().Format(guardTime), sl.Expires.Sub(now).Round(time.Second))
			}
			fmt.Fprintf(&b, "  slot %s: %s\n", sl.Holder, lease)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
