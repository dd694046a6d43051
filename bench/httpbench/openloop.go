package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
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
	// maxInFlight bounds the requests in flight or waiting for a
	// connection; a request due while that many are is not sent and
	// counted dropped. 0 is 4096.
	maxInFlight int
	// connections is how many keep-alive connections carry the requests;
	// 0 is 64 (twice the closed-loop rounds' 32, so that a stall shows as
	// queueing in the server rather than in the client).
	connections int
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

// openLoop runs c: a pacing loop hands each request, when it is due (late
// when the loop itself was late: the lag is recorded), to the first of
// c.connections keep-alive connections that is free; a request due while
// every connection is busy waits for one, and its wait counts in its
// latency. The client is a minimal HTTP/1.1 one over raw connections (the
// request's bytes written once, the answer's status line, headers and
// Content-Length body read with one buffer) so that the generator costs
// little of the machine the server shares: net/http's client cost about
// 100 µs of CPU a request here, as much as the servers measured. It
// returns when every request sent has ended, or the context ended.
func openLoop(ctx context.Context, c openLoopConfig) (openLoopResult, error) {
	if c.maxInFlight <= 0 {
		c.maxInFlight = 4096
	}
	if c.connections <= 0 {
		c.connections = 64
	}
	u, err := url.Parse(c.url)
	if err != nil {
		return openLoopResult{}, err
	}
	request := rawRequest(u, c.headers, c.body)
	res := openLoopResult{rate: c.rate, duration: c.duration, statuses: map[int]int{}}
	type due struct {
		at     time.Time
		record bool
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		jobs = make(chan due, c.maxInFlight)
	)
	for range c.connections {
		wg.Go(func() {
			conn := &rawConn{}
			defer conn.close()
			for d := range jobs {
				sent := time.Now()
				status, err := conn.roundTrip(ctx, u.Host, request)
				if err != nil {
					conn.close()
				}
				took := time.Since(d.at)
				if !d.record {
					continue
				}
				mu.Lock()
				res.recorded++
				res.lag = append(res.lag, sent.Sub(d.at))
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
				mu.Unlock()
			}
		})
	}
	interval := time.Duration(float64(time.Second) / c.rate)
	start := time.Now().Add(10 * time.Millisecond)
	recordFrom := start.Add(c.warmup)
	end := recordFrom.Add(c.duration)
	var stopped error
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if !at.Before(end) {
			break
		}
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		if stopped = ctx.Err(); stopped != nil {
			break
		}
		record := !at.Before(recordFrom)
		select {
		case jobs <- due{at, record}:
		default:
			if record {
				mu.Lock()
				res.recorded++
				res.dropped++
				mu.Unlock()
			}
		}
	}
	close(jobs)
	wg.Wait()
	slices.Sort(res.lat)
	slices.Sort(res.lag)
	return res, stopped
}

// rawRequest is the bytes of c's request: a POST of body to u with
// headers, on a keep-alive connection.
func rawRequest(u *url.URL, headers map[string]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", u.RequestURI(), u.Host, len(body))
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		fmt.Fprintf(&b, "%s: %s\r\n", k, headers[k])
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// rawConn is one keep-alive connection of the open-loop client.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// errAnswer is an answer the minimal client does not read: no
// Content-Length, chunked, or not HTTP/1.1.
var errAnswer = errors.New("an answer the open-loop client cannot read")

// roundTrip sends request on c (dialled to host first when it has no
// connection) and reads the whole answer, returning its status. After an
// error the connection is not usable: close it.
func (c *rawConn) roundTrip(ctx context.Context, host string, request []byte) (int, error) {
	if c.conn == nil {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", host)
		if err != nil {
			return 0, err
		}
		*c = rawConn{conn: conn, r: bufio.NewReaderSize(conn, 16<<10)}
	}
	if err := c.conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return 0, err
	}
	if _, err := c.conn.Write(request); err != nil {
		return 0, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, errAnswer
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, errAnswer
	}
	length := -1
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, errAnswer
		}
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return 0, errAnswer
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, errAnswer
		}
	}
	if length < 0 {
		return 0, errAnswer
	}
	if _, err := c.r.Discard(length); err != nil {
		return 0, err
	}
	return status, nil
}

// close closes the connection, if there is one.
func (c *rawConn) close() {
	if c.conn != nil {
		c.conn.Close() //nolint:errcheck // a connection done with: closing it loses nothing
		c.conn = nil
	}
}
