package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/internal/server"
)

// TestPACPlanLeavesNoScratch (issue 16, item 10): the PAC allocator's
// plan solves a MILP with cbc through files (model.lp, solution.txt,
// cbc.log); after a plan run through the run route nothing of them is
// left, neither in the server's <data>/scratch nor as a pac-* folder of
// the system temporary folder holding the caller's numbers.
// internal/supervisor's TestScratchRemoved covers the other endings
// (disconnect, SIGTERM, SIGKILL, timeout).
func TestPACPlanLeavesNoScratch(t *testing.T) {
	dataDir := t.TempDir()
	r := startConfigured(t, nil, true, func(c *server.Config) { c.DataDir = dataDir })
	const contribution = "1000.4321" // in the model's budget row
	body := `{"input":{"operation":"plan","currency":"EUR","contribution":"` + contribution + `",` +
		`"holdings":[{"instrument_id":"A","quantity":"10","price":"40","currency":"EUR"},{"instrument_id":"B","quantity":"4","price":"150","currency":"EUR"},` +
		`{"instrument_id":"C","quantity":"0","price":"70","currency":"EUR"}],` +
		`"targets":[{"instrument_id":"A","weight":"0.5"},{"instrument_id":"B","weight":"0.3"},{"instrument_id":"C","weight":"0.2"}],` +
		`"fees":{"fixed":"1","proportional":"0.01","minimum":"5"}}}`
	status, _, out := r.do("POST", "/api/v1/tools/pac_allocator/run", r.token, []byte(body))
	var res struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(out, &res); status != http.StatusOK || err != nil || res.Status != "succeeded" {
		t.Fatalf("plan: %d %s", status, out)
	}
	if inst, _ := filepath.Glob(filepath.Join(dataDir, server.ScratchDir, "*")); len(inst) != 1 {
		t.Errorf("scratch instance folders: %v", inst)
	}
	left, _ := filepath.Glob(filepath.Join(dataDir, server.ScratchDir, "*", "*"))
	for _, name := range left {
		t.Errorf("left in the scratch folder: %s", name)
	}
	models, _ := filepath.Glob(filepath.Join(os.TempDir(), "pac-*", "model.lp"))
	for _, m := range models {
		if b, err := os.ReadFile(m); err == nil && bytes.Contains(b, []byte(contribution)) {
			t.Errorf("the plan's model is in the system temporary folder: %s", m)
		}
	}
}
