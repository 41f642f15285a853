package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHarnessEndToEnd builds Pisces and runs the cheap measurements once
// with tiny sizes: the harness must keep working as Pisces changes.
func TestHarnessEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Pisces")
	}
	out := filepath.Join(t.TempDir(), "r.json")
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	err := run(config{runs: 1, short: true, jsonOut: out, only: "cold,tool,deltas,switch", timeout: 30 * time.Second,
		deltas: 200, switchN: 300, listN: 10, listEach: 10, treeN: 300})
	os.Stdout = stdout
	devnull.Close()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range res.Results {
		if len(r.Runs) > 0 {
			got[r.Group] = true
		}
	}
	for _, g := range []string{"cold start", "tool turn", "200 deltas, default delta interval", "200 deltas, --rpc-delta-interval 0", "open 300 entries"} {
		if !got[g] {
			t.Errorf("no figures for %q", g)
		}
	}
}
