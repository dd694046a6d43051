package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// runPath is the route every server answers.
const runPath = "/api/v1/tools/hash/run"

// computePath is Toolhost's seed-000 compute route.
const computePath = "/api/v1/tools/compute"

// server is one of the servers under test.
type server struct {
	name   string // toolhost, express or gin
	label  string // what the tables call it
	proc   *process
	base   string // http://127.0.0.1:PORT
	runURL string
	// headers are the run requests' headers: the same for every server
	// (the peers ignore the token), so that the requests are the same bytes.
	headers map[string]string
	// computeTokens are app tokens of distinct apps, one per connection, for
	// the compute route (Toolhost only).
	computeTokens []string
}

// runBody is the run request every server gets: the hash tool's digest of
// text with sha256, in a tools.run-request@1.
func runBody(text string) []byte {
	b, _ := json.Marshal(map[string]any{"input": map[string]string{
		"operation": "digest", "text": text, "algorithm": "sha256",
	}})
	return b
}

// startServers starts Toolhost, the Express peer when it can and the gin
// peer, each on a free loopback port, and waits until each answers a run.
func startServers(ctx context.Context, c config, tmp string, procs *processes) ([]*server, error) {
	dataDir := filepath.Join(tmp, "data")
	token, err := createToken(c.toolhost, dataDir, "httpbench")
	if err != nil {
		return nil, err
	}
	headers := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + token}
	th := &server{name: "toolhost", label: "Toolhost (app token, guard report)", headers: headers}
	if !c.skipCompute {
		for i := range max(c.connections, c.computeConnections) {
			t, err := createToken(c.toolhost, dataDir, fmt.Sprintf("httpbench-c%02d", i+1))
			if err != nil {
				return nil, err
			}
			th.computeTokens = append(th.computeTokens, t)
		}
	}
	toolsDir, err := filepath.Abs(c.toolsDir)
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--addr", addr, "--data-dir", dataDir, "--tools-dir", toolsDir,
		"--guard", "report", "--drain-delay", "0", "--shutdown-timeout", "10s"}
	if c.cacheDir != "" {
		args = append(args, "--cache-dir", c.cacheDir)
	}
	if th.proc, err = procs.start("toolhost", exec.Command(c.toolhost, args...)); err != nil {
		return nil, err
	}
	th.setAddr(addr)
	servers := []*server{th}

	if ex, why := expressCommand(c.expressDir); ex == nil {
		fmt.Printf("Express peer: skipped (%s)\n", why)
	} else {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		ex.Env = append(os.Environ(), "HOST="+host, "PORT="+port, "NODE_ENV=production")
		s := &server{name: "express", label: "Express peer (unsandboxed)", headers: headers}
		if s.proc, err = procs.start("express", ex); err != nil {
			return nil, err
		}
		s.setAddr(addr)
		servers = append(servers, s)
	}

	addr, err = freeAddr()
	if err != nil {
		return nil, err
	}
	g := &server{name: "gin", label: "gin peer (unsandboxed)", headers: headers}
	if g.proc, err = procs.start("gin", exec.Command(c.peer, "-addr", addr)); err != nil {
		return nil, err
	}
	g.setAddr(addr)
	servers = append(servers, g)

	for _, s := range servers {
		limit := 30 * time.Second
		if s.name == "toolhost" {
			limit = 5 * time.Minute // a first run compiles the modules
		}
		if err := s.waitReady(ctx, c.text, limit); err != nil {
			return nil, err
		}
	}
	return servers, nil
}

// expressCommand returns the command that starts the Express peer, or nil
// and why it cannot run here.
func expressCommand(dir string) (*exec.Cmd, string) {
	if dir == "" {
		return nil, "-express is empty"
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "node is not installed"
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "express")); err != nil {
		return nil, "no " + filepath.Join(dir, "node_modules") + ": run npm ci there (make bench-http does when npm is installed)"
	}
	cmd := exec.Command(node, "server.js")
	cmd.Dir = dir
	return cmd, ""
}

// createToken makes an app token with `toolhost token create`.
func createToken(toolhost, dataDir, app string) (string, error) {
	out, err := exec.Command(toolhost, "token", "create", "--app", app, "--data-dir", dataDir).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("creating an app token: %v: %s", err, bytes.TrimSpace(out))
	}
	return strings.TrimSpace(string(out)), nil
}

// freeAddr returns a loopback address with a port free at the time of the
// call.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close() //nolint:errcheck // a listener that served nothing: nothing to lose
	return l.Addr().String(), nil
}

func (s *server) setAddr(addr string) {
	s.base = "http://" + addr
	s.runURL = s.base + runPath
}

// post sends one request and returns the status, the Content-Type and the
// body.
func post(ctx context.Context, url string, headers map[string]string, body []byte) (int, string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: closing it loses nothing
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b, err
}

// waitReady polls the run route until it answers 200 with the tool's
// result, the server exits, or limit passes.
func (s *server) waitReady(ctx context.Context, text string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	body := runBody(text)
	var last string
	settled := 0 // polls that found no hash tool and no module loading
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		status, _, b, err := post(rctx, s.runURL, s.headers, body)
		cancel()
		if err == nil && status == http.StatusOK && bytes.Contains(b, []byte(`"status":"succeeded"`)) {
			return nil
		}
		if err == nil && status == http.StatusNotFound && s.loading(ctx) == 0 {
			if settled++; settled >= 10 {
				return fmt.Errorf("%s has no hash tool and loads no module: is codec.wasm in the tools folder (make wasm)? Its log ends:\n%s", s.name, s.proc.tail(20))
			}
		} else {
			settled = 0
		}
		if err != nil {
			last = err.Error()
		} else {
			last = strconv.Itoa(status) + " " + string(b)
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case !s.proc.alive():
			return fmt.Errorf("%s exited before it was ready; its log ends:\n%s", s.name, s.proc.tail(20))
		case time.Now().After(deadline):
			return fmt.Errorf("%s was not ready within %s (last answer: %s); its log ends:\n%s", s.name, limit, last, s.proc.tail(20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// loading is the count of module loads in progress that Toolhost's
// /readyz reports, or -1 when it cannot be read (a peer has no /readyz).
func (s *server) loading(ctx context.Context) int {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, s.base+"/readyz", nil)
	if err != nil {
		return -1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close() //nolint:errcheck // a response body: closing it loses nothing
	var r struct {
		Checks struct {
			Tools struct {
				Loading *int `json:"loading"`
			} `json:"tools"`
		} `json:"checks"`
	}
	if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Checks.Tools.Loading == nil {
		return -1
	}
	return *r.Checks.Tools.Loading
}

// executionID matches the id member that opens a tools.run@1.
var executionID = regexp.MustCompile(`^\{"id":"[0-9a-f]{32}",`)

// sameAnswers checks that every server answers the benchmark's request
// with the same status, Content-Type and body bytes as Toolhost, the
// execution id (fresh per answer) aside, and prints the answer.
func sameAnswers(ctx context.Context, servers []*server, text string) error {
	body := runBody(text)
	var want []byte
	var wantType string
	for i, s := range servers {
		status, ctype, b, err := post(ctx, s.runURL, s.headers, body)
		if err != nil {
			return fmt.Errorf("asking %s: %w", s.name, err)
		}
		if status != http.StatusOK || !executionID.Match(b) {
			return fmt.Errorf("%s answered %d %s, not a succeeded run with an execution id", s.name, status, b)
		}
		masked := executionID.ReplaceAll(b, []byte(`{"id":"…",`))
		if i == 0 {
			want, wantType = masked, ctype
			fmt.Printf("request: POST %s %s\nanswer (%s, the id aside): %s\n", runPath, body, ctype, masked)
			continue
		}
		if !bytes.Equal(masked, want) || ctype != wantType {
			return fmt.Errorf("the %s peer is not comparable: it answered (%s) %s where Toolhost answered (%s) %s", s.name, ctype, masked, wantType, want)
		}
	}
	fmt.Printf("every server answers these bytes: %d servers, %d bytes\n", len(servers), len(want))
	return nil
}
