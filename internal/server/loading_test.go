package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
	"github.com/toolhost/toolhost/internal/testmodule"
)

// loadingDiag is the part of diagnostics that lists loads in progress.
type loadingDiag struct {
	Loading []struct {
		File           string    `json:"filename"`
		Phase          string    `json:"phase"`
		Since          time.Time `json:"since"`
		ElapsedMS      int64     `json:"elapsed_ms"`
		PhaseElapsedMS int64     `json:"phase_elapsed_ms"`
		PhaseTimeoutMS int64     `json:"phase_timeout_ms"`
		Abandoned      bool      `json:"abandoned"`
	} `json:"loading"`
	Failures []struct {
		File   string `json:"filename"`
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	} `json:"failures"`
}

// diagnosticsBody is the raw diagnostics document and its loading part.
func (r *rig) loadingDiagnostics() (loadingDiag, string) {
	r.t.Helper()
	status, _, body := r.do("GET", "/api/v1/tools/diagnostics", r.token, nil)
	if status != http.StatusOK {
		r.t.Fatalf("diagnostics: %d %s", status, body)
	}
	var d loadingDiag
	if err := json.Unmarshal(body, &d); err != nil {
		r.t.Fatalf("diagnostics: %v in %s", err, body)
	}
	if d.Loading == nil {
		r.t.Fatalf("diagnostics without a loading list: %s", body)
	}
	return d, string(body)
}

// readyTools is /readyz's answer and its tools check.
type readyTools struct {
	Status string `json:"status"`
	Checks struct {
		Tools *struct {
			Loading   int `json:"loading"`
			Abandoned int `json:"abandoned"`
		} `json:"tools"`
	} `json:"checks"`
}

func (r *rig) readyz() readyTools {
	r.t.Helper()
	status, _, body := r.do("GET", "/readyz", "", nil)
	var rd readyTools
	if err := json.Unmarshal(body, &rd); err != nil || status != http.StatusOK || rd.Status != "ready" || rd.Checks.Tools == nil {
		r.t.Fatalf("/readyz while loads are pending: %d %s", status, body)
	}
	return rd
}

// A tool author who drops a module sees it in diagnostics' loading list
// with its phase and since when, and /readyz (200 all along) counts it,
// until it is refused: then it is in the failures and in neither.
func TestDiagnosticsListLoadsInProgress(t *testing.T) {
	const imageDeadline = 4 * time.Second
	r := startConfigured(t, map[string][]byte{"ping.wasm": testmodule.WAT(t, "ping")}, false, func(c *server.Config) {
		c.Loading = server.LoadingConfig{Wait: 300 * time.Millisecond, Image: imageDeadline, MaxLoads: 4}
	})
	if rd := r.readyz(); rd.Checks.Tools.Loading != 0 || rd.Checks.Tools.Abandoned != 0 {
		t.Errorf("/readyz before any load: %+v", *rd.Checks.Tools)
	}
	if d, _ := r.loadingDiagnostics(); len(d.Loading) != 0 {
		t.Errorf("loads before any was dropped: %+v", d.Loading)
	}

	dropped := time.Now()
	r.drop("loop.wasm", testmodule.WAT(t, "image_loop"))
	deadline := time.Now().Add(60 * time.Second)
	for {
		d, body := r.loadingDiagnostics()
		if strings.Contains(body, r.tools) {
			t.Errorf("diagnostics hold the tools folder's path: %s", body)
		}
		i := -1
		for j, l := range d.Loading {
			if l.File == "loop.wasm" && l.Phase == "image" {
				i = j
			}
		}
		if i >= 0 {
			l := d.Loading[i]
			t.Logf("listed %v after the drop: %s", time.Since(dropped).Round(time.Millisecond), body[strings.Index(body, `"loading"`):strings.Index(body, `"capabilities"`)])
			if l.Abandoned || l.PhaseTimeoutMS != imageDeadline.Milliseconds() || l.PhaseElapsedMS > l.ElapsedMS ||
				l.Since.Before(dropped.Add(-time.Millisecond)) || l.Since.After(time.Now()) || l.Since.Location() != time.UTC {
				t.Errorf("the load in its image phase: %+v (dropped at %v)", l, dropped.UTC())
			}
			for _, f := range d.Failures {
				if f.File == "loop.wasm" {
					t.Errorf("refused while listed in its image phase: %+v", f)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("loop.wasm never listed in its image phase: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Still in its image phase (it lasts until its deadline): counted.
	if rd := r.readyz(); rd.Checks.Tools.Loading < 1 {
		t.Errorf("/readyz while loop.wasm loads: %+v", *rd.Checks.Tools)
	}
	// ping answers meanwhile.
	if code, err := r.runTool("ping", r.token, pingRun); err != nil || code != "" {
		t.Errorf("ping while loop.wasm loads: %q %v", code, err)
	}

	r.awaitRefused(t, hostileCase{refused: []string{"load_timeout/image"}}, "loop.wasm", dropped, imageDeadline)
	for {
		d, body := r.loadingDiagnostics()
		rd := r.readyz()
		if len(d.Loading) == 0 && rd.Checks.Tools.Loading == 0 && rd.Checks.Tools.Abandoned == 0 {
			refused := false
			for _, f := range d.Failures {
				refused = refused || f.File == "loop.wasm" && f.Reason == "import_failed" && f.Detail == "load_timeout/image"
			}
			if !refused {
				t.Errorf("no longer loading, and not refused: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still listed after its refusal: %s, /readyz %+v", body, *rd.Checks.Tools)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
