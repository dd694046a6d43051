// Command peer is the unsandboxed gin peer of `make bench-http`: one route,
// POST /api/v1/tools/hash/run, doing in plain Go what the bundled `hash`
// tool does in its sandbox for operation digest with algorithm sha256 — the
// SHA-256 of the input text's UTF-8 bytes, lower-case hex — and answering
// the same tools.run@1 shape as Toolhost's run route:
//
//	{"id":"<32 hex>","tool":"hash","status":"succeeded","result":{"digest":"<64 hex>"}}
//
// It is the baseline an ordinary handler sets, not a second Toolhost: no
// schema, no quota, no access log, no sandbox. It keeps the peer honest in
// the ways a benchmark can see: every request is decoded and hashed afresh
// (nothing is cached), the id is fresh randomness per answer as Toolhost's
// execution id is, and the answer's bytes equal Toolhost's but for the id
// (the driver, bench/httpbench, checks that before it measures). An input
// that is not a sha256 digest request is refused with 422.
//
// Usage: peer [-addr 127.0.0.1:8081]. SIGINT or SIGTERM stops it.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
)

// maxBodyBytes is the largest body the peer reads, Toolhost's own cap.
const maxBodyBytes = 1 << 20

// runRequest is the part of a tools.run-request@1 the peer reads.
type runRequest struct {
	Input struct {
		Operation string  `json:"operation"`
		Text      *string `json:"text"`
		Algorithm string  `json:"algorithm"`
	} `json:"input"`
}

// runAnswer is a succeeded tools.run@1, its members in the order Toolhost
// writes them.
type runAnswer struct {
	ID     string       `json:"id"`
	Tool   string       `json:"tool"`
	Status string       `json:"status"`
	Result digestResult `json:"result"`
}

// digestResult is the hash tool's output document.
type digestResult struct {
	Digest string `json:"digest"`
}

// newEngine returns the peer's gin engine: the run route alone, with
// gin's panic recovery and nothing else.
func newEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(gin.Recovery())
	e.POST("/api/v1/tools/hash/run", runHash)
	return e
}

// runHash answers one run of the hash tool.
func runHash(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxBodyBytes)
	var req runRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"code": "invalid_json"})
		return
	}
	in := req.Input
	if in.Operation != "digest" || in.Algorithm != "sha256" || in.Text == nil {
		c.JSON(http.StatusUnprocessableEntity, gin.H{"code": "invalid_input"})
		return
	}
	sum := sha256.Sum256([]byte(*in.Text))
	c.JSON(http.StatusOK, runAnswer{
		ID: newID(), Tool: "hash", Status: "succeeded",
		Result: digestResult{Digest: hex.EncodeToString(sum[:])},
	})
}

// newID returns 16 random bytes in hex, the form of Toolhost's execution
// ids.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "the address to listen on")
	flag.Parse()
	if err := serve(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

// serve serves until SIGINT or SIGTERM, then shuts down within 5 s.
func serve(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: newEngine(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
