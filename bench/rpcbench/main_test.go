package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/testenv"
)

// runQuiet runs the harness with its table going to /dev/null and returns
// the JSON it writes.
func runQuiet(t *testing.T, c config) map[string]json.RawMessage {
	t.Helper()
	c.jsonOut = filepath.Join(t.TempDir(), "r.json")
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	err := run(c)
	os.Stdout = stdout
	devnull.Close()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// groupsWithRuns are the groups of rs that have figures.
func groupsWithRuns(t *testing.T, raw json.RawMessage) map[string]bool {
	t.Helper()
	var rs []Result
	if err := json.Unmarshal(raw, &rs); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range rs {
		if len(r.Runs) > 0 {
			got[r.Group] = true
		}
	}
	return got
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup() // the binary PiscesBinary built, if any
	os.Exit(code)
}

// piscesAgent is the agent command of the pisces binary the tests run
// (testenv.PiscesBinary); the harness's own build of Pisces runs in CI as
// go run ./bench/rpcbench -short.
func piscesAgent(t *testing.T) (bin, agent string) {
	t.Helper()
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(bin, " \t") {
		t.Fatalf("the agent command is split at blanks; the binary's path has one: %q", bin)
	}
	return bin, bin + " --mode rpc"
}

// TestHarnessEndToEnd runs the cheap measurements once with tiny sizes: the
// harness must keep working as Pisces changes.
func TestHarnessEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Pisces")
	}
	_, agent := piscesAgent(t)
	out := runQuiet(t, config{agent: agent, runs: 1, short: true, only: "cold,init,tool,deltas,switch", timeout: time.Minute,
		deltas: 200, switchN: 300, listN: 10, listEach: 10, treeN: 300})
	got := groupsWithRuns(t, out["results"])
	for _, g := range []string{"cold start", "package init (GODEBUG=inittrace=1)", "tool turn", "200 deltas",
		"200 deltas, default delta interval", "200 deltas, --rpc-delta-interval 0", "open 300 entries"} {
		if !got[g] {
			t.Errorf("no figures for %q", g)
		}
	}
}

// TestCompareEndToEnd runs the comparison with a second agent that is not
// recognised as Pisces (a copy of the Pisces binary under another name):
// the runs alternate, rows that only Pisces has stay Pisces' only, and
// the table has the ratio column.
func TestCompareEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Pisces")
	}
	bin, agent := piscesAgent(t)
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other-agent")
	if err := os.WriteFile(other, data, 0o755); err != nil {
		t.Fatal(err)
	}
	out := runQuiet(t, config{agent: agent, comparePi: true, pi: other, runs: 1, short: true, only: "cold,init,deltas,switch",
		timeout: time.Minute, deltas: 200, switchN: 300, listN: 10, listEach: 10, treeN: 300})
	var agents []struct {
		Name    string          `json:"name"`
		Pisces  bool            `json:"pisces"`
		Results json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(out["agents"], &agents); err != nil {
		t.Fatal(err)
	}
	if len(agents) != 2 || agents[0].Name != "Pisces" || agents[1].Name != "pi" || agents[1].Pisces {
		t.Fatalf("agents: %+v", agents)
	}
	base, second := groupsWithRuns(t, agents[0].Results), groupsWithRuns(t, agents[1].Results)
	for _, g := range []string{"cold start", "200 deltas, default delta interval", "open 300 entries"} {
		if !base[g] || !second[g] {
			t.Errorf("%q: figures for Pisces %v, for the second agent %v", g, base[g], second[g])
		}
	}
	for _, g := range []string{"package init (GODEBUG=inittrace=1)", "200 deltas, --rpc-delta-interval 0"} {
		if !base[g] || second[g] {
			t.Errorf("%q should be Pisces' only: Pisces %v, second agent %v", g, base[g], second[g])
		}
	}
	if second["200 deltas"] || base["200 deltas"] {
		t.Error("the mock's floor is an agent's row; want it among the shared rows")
	}
	if !strings.Contains(string(out["shared"]), "floor") {
		t.Errorf("shared rows: %s", out["shared"])
	}
}

// TestPiEndToEnd measures pi itself when NODE and PI_CLI name it (pi 1.5.2
// from npm, @earendil-works/pi-coding-agent), else it is skipped.
func TestPiEndToEnd(t *testing.T) {
	if testing.Short() || os.Getenv("PI_CLI") == "" {
		t.Skip("needs pi: NODE and PI_CLI")
	}
	out := runQuiet(t, config{comparePi: true, runs: 1, short: true, only: "cold,deltas,switch,list",
		timeout: 60 * time.Second, deltas: 200, switchN: 300, listN: 10, listEach: 10, treeN: 300})
	var agents []struct {
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(out["agents"], &agents); err != nil {
		t.Fatal(err)
	}
	rows := map[string]Result{}
	for _, r := range agents[1].Results {
		rows[r.Group+": "+r.Name] = r
	}
	for _, k := range []string{"cold start: process start → get_state response", "200 deltas, default delta interval: prompt → agent_end",
		"open 300 entries: switch_session", "open 300 entries: then get_messages", "open 300 entries: then get_entries"} {
		if len(rows[k].Runs) == 0 {
			t.Errorf("pi: no figure for %q (note %q)", k, rows[k].Note)
		}
	}
	if n := rows["list 10 sessions × 10 entries: list_sessions, first call"].Note; !strings.Contains(n, "Unknown command") {
		t.Errorf("pi's list_sessions: note %q, want its Unknown command answer", n)
	}
}

// TestAlternate checks the order of the runs: warm-up first, then one run
// of each agent after the other; a failing agent drops out, the rest go on.
func TestAlternate(t *testing.T) {
	a, p := &agent{name: "A"}, &agent{name: "B"}
	b := &bench{cfg: config{runs: 3, warmup: 1}, agents: []*agent{a, p}}
	var log []string
	b.alternate(func(ag *agent) func(bool) error {
		n := 0
		return func(record bool) error {
			n++
			log = append(log, ag.name+map[bool]string{true: "", false: "w"}[record])
			if ag == p && n == 3 {
				return os.ErrDeadlineExceeded
			}
			return nil
		}
	})
	if got, want := strings.Join(log, " "), "Aw Bw A B A B A"; got != want {
		t.Errorf("runs %q, want %q", got, want)
	}
	if len(p.failures) != 1 || len(a.failures) != 0 {
		t.Errorf("failures: A %v, B %v", a.failures, p.failures)
	}
}

func TestInitTrace(t *testing.T) {
	stderr := "init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"something else\n" +
		"init runtime @0.10 ms, 0.050 ms clock, 1024 bytes, 3 allocs\n" +
		"init net @2.5 ms, 1.25 ms clock, 2048 bytes, 10 allocs\n"
	n, clock, end, bytes := initTrace(stderr)
	if n != 3 || clock != 1.3 || end != 3.75 || bytes != 3072 {
		t.Errorf("initTrace = %d packages, %v ms, ends %v ms, %d bytes", n, clock, end, bytes)
	}
}

func TestPrintCompare(t *testing.T) {
	p := &agent{name: "Pisces", isPisces: true}
	q := &agent{name: "pi"}
	b := &bench{}
	for _, ag := range []*agent{p, q} {
		r := b.result(ag, "cold start", "get_state", "ms", "≤ 10 ms", 10)
		r.Runs = map[*agent][]float64{p: {5, 6, 7}, q: {300, 200, 100}}[ag]
		l := b.result(ag, "list", "list_sessions", "ms", "≤ 100 ms", 100)
		if ag == q {
			l.Note = "failed: Unknown command: list_sessions"
		} else {
			l.Runs = []float64{50}
		}
	}
	b.result(p, "deltas", "interval 0", "ms", "", 0).Runs = []float64{20}
	for _, ag := range []*agent{p, q} {
		for _, r := range ag.results {
			r.finish()
		}
	}
	var w bytes.Buffer
	printCompare(&w, []*agent{p, q})
	for _, want := range []string{
		"| measurement | unit | Pisces | pi | pi ÷ Pisces | target | |",
		"| cold start: get_state | ms | 6.00 (5.00–7.00) | 200.0 (100.0–300.0) | 33× | ≤ 10 ms | ok |",
		"| list: list_sessions | ms | 50.00 | – (Unknown command: list_sessions) |  | ≤ 100 ms | ok |",
		"| deltas: interval 0 | ms | 20.00 | (Pisces only) |  |  |  |",
	} {
		if !strings.Contains(w.String(), want+"\n") {
			t.Errorf("missing line %q in\n%s", want, w.String())
		}
	}
}
