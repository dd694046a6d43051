package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// openLoopConfig is one open-loop run: requests due at a fixed rate for
// duration, the first warmup of them sent but not recorded.
type openLoopConfig struct {
	url      string
	body     []byte
	headers  map[string]string
	rate     float64 // requests a second
	duration time.Duration
	warmup   time.Duration
	// maxInFlight bounds the requests in flight; a request due while that
	// many are is not sent and counted dropped. 0 is 4096.
	maxInFlight int
}

// openLoopResult is what it measured. Every latency runs from when the
// request was due, not from when it was sent, so that the generator's own
// lag and the server's queueing both count.
type openLoopResult struct {
	rate     float64
	duration time.Duration
	// recorded counts the requests due after the warm-up; ok, non2xx,
	// failed (no answer) and dropped (never sent) split them.
	recorded, ok, non2xx, failed, dropped int
	statuses                              map[int]int
	// lat are the 2xx answers' latencies, sorted; lag how late each
	// recorded request was sent after it was due, sorted.
	lat, lag []time.Duration
	// serverCPU, generatorCPU and machineCPU are the CPU used over the
	// run, in % of one core (set by the caller).
	serverCPU, generatorCPU, machineCPU float64
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted
// d, or 0 when d is empty.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(d)))) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// openLoop runs c: one goroutine per request, started when the request is
// due (late when the scheduler itself was late: the lag is recorded), over
// keep-alive connections. It returns when every request sent has ended, or
// the context ended.
func openLoop(ctx context.Context, c openLoopConfig) (openLoopResult, error) {
	if c.maxInFlight <= 0 {
		c.maxInFlight = 4096
	}
	tr := &http.Transport{
		MaxIdleConns: c.maxInFlight, MaxIdleConnsPerHost: c.maxInFlight,
		IdleConnTimeout: time.Minute, DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	res := openLoopResult{rate: c.rate, duration: c.duration, statuses: map[int]int{}}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		inFlight = make(chan struct{}, c.maxInFlight)
	)
	interval := time.Duration(float64(time.Second) / c.rate)
	start := time.Now().Add(10 * time.Millisecond)
	recordFrom := start.Add(c.warmup)
	end := recordFrom.Add(c.duration)
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if !due.Before(end) {
			break
		}
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				wg.Wait()
				return res, ctx.Err()
			}
		}
		record := !due.Before(recordFrom)
		select {
		case inFlight <- struct{}{}:
		default:
			if record {
				res.recorded++
				res.dropped++
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-inFlight }()
			sent := time.Now()
			status, err := send(ctx, client, c)
			took := time.Since(due)
			if !record {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			res.recorded++
			res.lag = append(res.lag, sent.Sub(due))
			switch {
			case err != nil:
				res.failed++
			case status >= 200 && status < 300:
				res.ok++
				res.lat = append(res.lat, took)
			default:
				res.non2xx++
			}
			if err == nil {
				res.statuses[status]++
			}
		}()
	}
	wg.Wait()
	slices.Sort(res.lat)
	slices.Sort(res.lag)
	return res, ctx.Err()
}

// send posts c's request and reads the whole answer.
func send(ctx context.Context, client *http.Client, c openLoopConfig) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.body))
	if err != nil {
		return 0, err
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}
