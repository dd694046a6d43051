package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/server"
)

// tierOf returns the tier diagnostics show for the service code, "" when
// it is not listed.
func (r *rig) tierOf(code string) (tier, failure string, generation int) {
	r.t.Helper()
	var d struct {
		Generation  int `json:"generation"`
		Descriptors []struct {
			ToolCode    string `json:"tool_code"`
			Tier        string `json:"tier"`
			TierFailure string `json:"tier_failure"`
		} `json:"descriptors"`
	}
	r.getJSON("/api/v1/tools/diagnostics", &d)
	for _, s := range d.Descriptors {
		if s.ToolCode == code {
			return s.Tier, s.TierFailure, d.Generation
		}
	}
	return "", "", d.Generation
}

// computeHash runs one hash item through the seed-000 compute route, which
// reports the item's fuel, and returns its result and fuel; ok is false
// until the tool is published.
func (r *rig) computeHash(fingerprint string) (result json.RawMessage, fuel int64, ok bool) {
	r.t.Helper()
	body := []byte(`{"items":[{"contract_version":"1.0.0","correlation_id":"a","implementation_version":"1.0.0",` +
		`"parameters":{"algorithm":"sha256","operation":"digest","text":"tiered"},"schema_fingerprint":"` + fingerprint +
		`","tool_code":"hash"}],"request_id":"tiered"}`)
	status, _, b := r.do("POST", "/api/v1/tools/compute", r.token, body)
	if status != http.StatusOK {
		r.t.Fatalf("compute: %d %s", status, b)
	}
	var doc struct {
		Results []struct {
			Status    string          `json:"status"`
			Result    json.RawMessage `json:"result"`
			Resources struct {
				FuelUsed *int64 `json:"fuel_used"`
			} `json:"resources"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Results) != 1 {
		r.t.Fatalf("compute: %v in %s", err, b)
	}
	res := doc.Results[0]
	if res.Status != "success" {
		return nil, 0, false
	}
	if res.Resources.FuelUsed == nil {
		r.t.Fatalf("a successful item without fuel_used: %s", b)
	}
	return res.Result, *res.Resources.FuelUsed, true
}

// Issue 14, "Done means": a module dropped into a running server with a
// cold compilation cache serves a successful item from the interpreter
// tier at once, then — after its optimised compile is swapped in, with no
// new generation — the same item from the compiled tier, with the same
// result and the same fuel. Diagnostics show both tiers.
func TestDroppedModuleTiered(t *testing.T) {
	if raceRSSExtra > 0 {
		t.Skip("a cold compile of a Go module takes minutes under the race detector; the test runs without it")
	}
	codec := module(t, "plugins-src/codec")
	r := startConfigured(t, nil, false, func(c *server.Config) {
		c.CacheDir = t.TempDir() // cold: nothing compiled yet
		c.Loading = server.LoadingConfig{Background: true}
	})
	fingerprint := ""
	dropped := time.Now()
	r.drop("codec.wasm", codec)
	eventually(t, "the dropped module is published", func() bool {
		for _, d := range r.catalog().Items {
			if d.ToolCode == "hash" {
				fingerprint = d.SchemaFingerprint
				return true
			}
		}
		return false
	})
	// An item that ran on the interpreter: the tier was the
	// interpreter's before it started and still after it ended (the swap
	// happens once).
	before, _, generation := r.tierOf("hash")
	if before != "interpreter" {
		t.Fatalf("a module just dropped on a cold cache is served by the %q tier, want interpreter", before)
	}
	interpreted, interpretedFuel, ok := r.computeHash(fingerprint)
	if !ok {
		t.Fatal("the first item on the interpreter tier failed")
	}
	firstItem := time.Since(dropped)
	if after, _, _ := r.tierOf("hash"); after != "interpreter" {
		t.Skipf("the compiled tier was swapped in during the first item (after %v); nothing to compare", firstItem)
	}
	t.Logf("drop to the first successful item on the interpreter tier: %v", firstItem)
	deadline := time.Now().Add(10 * time.Minute) // a cold compile under the race detector
	for {
		tier, failure, _ := r.tierOf("hash")
		if failure != "" {
			t.Fatalf("the compile in the background failed: %s", failure)
		}
		if tier == "compiled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the compiled tier was not swapped in")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("drop to the compiled tier: %v", time.Since(dropped))
	compiled, compiledFuel, ok := r.computeHash(fingerprint)
	if !ok {
		t.Fatal("an item on the compiled tier failed")
	}
	if !bytes.Equal(compiled, interpreted) || compiledFuel != interpretedFuel {
		t.Errorf("interpreter tier: %s with fuel %d; compiled tier: %s with fuel %d", interpreted, interpretedFuel, compiled, compiledFuel)
	}
	if _, _, g := r.tierOf("hash"); g != generation {
		t.Errorf("the swap published generation %d (was %d)", g, generation)
	}
}
