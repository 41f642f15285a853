// Command rpcbench measures an agent that speaks pi's RPC protocol the way a
// client feels it: cold start, a tool turn, a long streamed reply, opening,
// listing and browsing big sessions. The agent talks to a local mock LLM
// server (bench/mockllm) through a models.json custom provider in a
// temporary agent dir; big session files are generated (bench/sessgen).
//
//	go run ./bench/rpcbench                      # Pisces, built from this checkout
//	go run ./bench/rpcbench -short               # CI: 2 runs, small sizes
//	go run ./bench/rpcbench -agent "pi --mode rpc" -json pi.json
//
// The agent dir is passed as PISCES_CODING_AGENT_DIR and PI_CODING_AGENT_DIR,
// so any agent reading either finds the mock provider. Figures are printed
// as a Markdown table next to their targets (docs/performance.md); -json
// writes them all.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pisces-agent/pisces/bench/driver"
	"github.com/pisces-agent/pisces/bench/mockllm"
	"github.com/pisces-agent/pisces/bench/sessgen"
)

// benchTools is the tool set every measured agent runs with (pi's default).
const benchTools = "read,bash,edit,write"

type config struct {
	agent    string
	extra    string
	runs     int
	warmup   int
	short    bool
	jsonOut  string
	only     string
	keep     bool
	timeout  time.Duration
	verbose  bool
	trace    bool
	profile  string
	deltas   int
	switchN  int
	listN    int
	listEach int
	treeN    int
}

// bench holds what every measurement shares.
type bench struct {
	cfg      config
	argv     []string // the agent command
	isPisces bool
	tmp      string
	agentDir string
	workDir  string // cwd of the agents (no sessions listed here)
	listDir  string // cwd of the list_sessions agents
	dataDir  string // generated session files
	env      []string
	mock     *mockllm.Server
	results  []*Result
	log      io.Writer
	phase    string // the running measurement (profile file names)
	stderr   *tail  // the last agent's stderr
	nproc    int
}

func main() {
	var c config
	flag.StringVar(&c.agent, "agent", "", `agent command (default: Pisces built from this checkout), e.g. "pi --mode rpc"`)
	flag.StringVar(&c.extra, "agent-args", "", "extra arguments for every agent start")
	flag.IntVar(&c.runs, "runs", 5, "runs per measurement (median, min, max)")
	flag.IntVar(&c.warmup, "warmup", 1, "unrecorded runs before each measurement")
	flag.BoolVar(&c.short, "short", false, "CI mode: 2 runs, no warm-up, small sizes")
	flag.StringVar(&c.jsonOut, "json", "", "write the results as JSON to this file")
	flag.StringVar(&c.only, "only", "", "comma-separated measurements: cold,tool,deltas,switch,list,tree")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory")
	flag.DurationVar(&c.timeout, "timeout", 60*time.Second, "timeout of every wait")
	flag.BoolVar(&c.verbose, "v", false, "progress and the agents' stderr on stderr")
	flag.BoolVar(&c.trace, "trace", false, "print every stdout line of each prompt with its time (stderr)")
	flag.StringVar(&c.profile, "profile", "", "directory: run Pisces with profiling (bench/piscesprof), one CPU and one allocation profile per process")
	flag.IntVar(&c.deltas, "deltas", 0, "text deltas of the long reply (default 5000; -short 1000)")
	flag.IntVar(&c.switchN, "switch-entries", 0, "entries of the switch_session file (default 20000; -short 2000)")
	flag.IntVar(&c.listN, "list-sessions", 0, "sessions for list_sessions (default 2000; -short 200)")
	flag.IntVar(&c.listEach, "list-entries", 50, "entries per listed session")
	flag.IntVar(&c.treeN, "tree-entries", 0, "entries of the get_session_tree file (default 100000; -short 10000)")
	flag.Parse()
	if c.short {
		if !isSet("runs") {
			c.runs = 2
		}
		if !isSet("warmup") {
			c.warmup = 0
		}
	}
	def := func(v *int, full, short int) {
		if *v <= 0 {
			*v = full
			if c.short {
				*v = short
			}
		}
	}
	def(&c.deltas, 5000, 1000)
	def(&c.switchN, 20000, 2000)
	def(&c.listN, 2000, 200)
	def(&c.treeN, 100000, 10000)
	if c.runs < 1 {
		c.runs = 1
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "rpcbench:", err)
		os.Exit(1)
	}
}

func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func run(c config) error {
	b := &bench{cfg: c, log: io.Discard}
	if c.verbose {
		b.log = os.Stderr
	}
	tmp, err := os.MkdirTemp("", "rpcbench-")
	if err != nil {
		return err
	}
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		return err
	}
	b.tmp = tmp
	if c.keep {
		fmt.Fprintln(os.Stderr, "rpcbench: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
		// An interrupted run cleans up too (the agents see their stdin
		// close when this process ends).
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
		go func() {
			<-sig
			os.RemoveAll(tmp)
			os.Exit(130)
		}()
	}
	b.agentDir = filepath.Join(tmp, "agent")
	b.workDir = filepath.Join(tmp, "work")
	b.listDir = filepath.Join(tmp, "work-list")
	b.dataDir = filepath.Join(tmp, "data")
	for _, d := range []string{b.agentDir, b.workDir, b.listDir, b.dataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	if c.agent == "" {
		bin := filepath.Join(tmp, "pisces")
		// The static release build (README): without cgo the binary does
		// not load libc and ld.so, about 1.4 MB of resident memory.
		fmt.Fprintln(os.Stderr, "rpcbench: building Pisces (CGO_ENABLED=0, the static release build)")
		pkg := "./cmd/pisces"
		if c.profile != "" {
			pkg = "./bench/piscesprof"
		}
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Dir, err = moduleRoot()
		if err != nil {
			return err
		}
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building pisces: %w", err)
		}
		if err := coldCache(bin); err != nil {
			fmt.Fprintf(os.Stderr, "rpcbench: cannot drop the built binary from the page cache (%v); resident sizes may read high\n", err)
		}
		b.argv = []string{bin, "--mode", "rpc"}
		b.isPisces = true
	} else {
		b.argv = strings.Fields(c.agent)
		b.isPisces = strings.Contains(filepath.Base(b.argv[0]), "pisces")
	}
	// The same tools for every agent: pi 1.5.2 activates read, bash, edit
	// and write, Pisces also task and todo_write, and the tool list goes
	// into every model request and system message. -agent-args come after
	// and may override it.
	b.argv = append(b.argv, "--tools", benchTools)
	b.argv = append(b.argv, strings.Fields(c.extra)...)

	b.mock, err = mockllm.Start(mockllm.Options{IdleTimeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer b.mock.Close()
	if err := b.writeModels(); err != nil {
		return err
	}
	b.env = append(os.Environ(),
		"PISCES_CODING_AGENT_DIR="+b.agentDir,
		"PI_CODING_AGENT_DIR="+b.agentDir,
		"PI_SKIP_VERSION_CHECK=1",
	)
	if c.profile != "" {
		if c.profile, err = filepath.Abs(c.profile); err != nil {
			return err
		}
		b.cfg.profile = c.profile
		if err := os.MkdirAll(c.profile, 0o755); err != nil {
			return err
		}
	}

	load0 := loadAvg()
	start := time.Now()
	steps := []struct {
		name string
		fn   func() error
	}{
		{"cold", b.coldStart},
		{"tool", b.toolTurn},
		{"deltas", b.deltaReply},
		{"switch", b.switchSession},
		{"list", b.listSessions},
		{"tree", b.sessionTree},
	}
	var failures []string
	for _, s := range steps {
		if c.only != "" && !contains(strings.Split(c.only, ","), s.name) {
			continue
		}
		t0 := time.Now()
		b.phase = s.name
		fmt.Fprintf(os.Stderr, "rpcbench: %s ...", s.name)
		err := s.fn()
		fmt.Fprintf(os.Stderr, " %.1fs\n", time.Since(t0).Seconds())
		if err != nil {
			failures = append(failures, s.name+": "+err.Error())
			fmt.Fprintf(os.Stderr, "rpcbench: %s failed: %v\n", s.name, err)
		}
	}
	for _, r := range b.results {
		r.finish()
	}

	host, _ := os.Hostname()
	fmt.Printf("agent: %s\nmachine: %s, %d CPUs, %s, %s/%s\ndate: %s\nload average: %s at start, %s at end\nruns: %d (warm-up %d)%s\n\n",
		strings.Join(b.displayArgv(), " "), cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		time.Now().UTC().Format(time.RFC3339), load0, loadAvg(), c.runs, c.warmup, map[bool]string{true: ", short mode", false: ""}[c.short])
	printTable(os.Stdout, b.results)
	fmt.Printf("\ntotal %.1fs\n", time.Since(start).Seconds())

	if c.jsonOut != "" {
		out := map[string]any{
			"agent": b.displayArgv(), "pisces": b.isPisces, "date": time.Now().UTC().Format(time.RFC3339),
			"machine":     map[string]any{"cpu": cpuModel(), "nproc": runtime.NumCPU(), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH, "host": host},
			"loadAverage": []string{load0, loadAvg()},
			"runs":        c.runs, "warmup": c.warmup, "short": c.short,
			"sizes":   map[string]int{"deltas": c.deltas, "switchEntries": c.switchN, "listSessions": c.listN, "listEntries": c.listEach, "treeEntries": c.treeN},
			"results": b.results, "failures": failures,
		}
		data, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(c.jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	return nil
}

func (b *bench) displayArgv() []string {
	a := append([]string(nil), b.argv...)
	if b.isPisces && b.cfg.agent == "" {
		a[0] = "pisces"
	}
	return a
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run rpcbench inside the Pisces module, or pass -agent")
	}
	return filepath.Dir(mod), nil
}

// loadAvg is the 1-minute load average (the machine's noise).
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, ln := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(ln, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// writeModels writes models.json with two providers on the mock server:
// "mock" (OpenAI Chat Completions) and "mock-anthropic" (Messages).
func (b *bench) writeModels() error {
	cfg := map[string]any{"providers": map[string]any{
		"mock": map[string]any{
			"baseUrl": b.mock.URL() + "/v1", "api": "openai-completions", "apiKey": "mock-key",
			"models": []any{map[string]any{"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 16384}},
		},
		"mock-anthropic": map[string]any{
			"baseUrl": b.mock.URL(), "api": "anthropic-messages", "apiKey": "mock-key",
			"models": []any{map[string]any{"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 16384}},
		},
	}}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	return os.WriteFile(filepath.Join(b.agentDir, "models.json"), data, 0o644)
}

// start starts one agent process.
func (b *bench) start(dir string, args ...string) (*driver.Agent, error) {
	argv := append(append([]string(nil), b.argv...), args...)
	b.stderr = &tail{max: 4096}
	var stderr io.Writer = b.stderr
	if b.cfg.verbose {
		stderr = io.MultiWriter(os.Stderr, b.stderr)
	}
	env := b.env
	if b.cfg.profile != "" {
		b.nproc++
		name := fmt.Sprintf("%s-%02d", b.phase, b.nproc)
		env = append(append([]string(nil), env...),
			"PISCES_CPUPROFILE="+filepath.Join(b.cfg.profile, name+".cpu.pprof"),
			"PISCES_MEMPROFILE="+filepath.Join(b.cfg.profile, name+".allocs.pprof"))
	}
	return driver.Start(driver.Config{Argv: argv, Env: env, Dir: dir, Stderr: stderr, Timeout: b.cfg.timeout})
}

// target returns a row's target, or none (limit 0, marked in the text)
// when the measured size is not the one the target is set for.
func target(canonical bool, text string, limit float64) (string, float64) {
	if !canonical {
		return text + " (full size)", 0
	}
	return text, limit
}

// result returns a new row.
func (b *bench) result(group, name, unit, target string, limit float64) *Result {
	r := &Result{Group: group, Name: name, Unit: unit, Target: target, Limit: limit, Runs: []float64{}}
	b.results = append(b.results, r)
	return r
}

// repeat runs fn warm-up + runs times; record is false during warm-up.
func (b *bench) repeat(fn func(record bool) error) error {
	for i := 0; i < b.cfg.warmup+b.cfg.runs; i++ {
		if err := fn(i >= b.cfg.warmup); err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
func mb(n int64) float64         { return float64(n) / (1 << 20) }
func kb(n int64) float64         { return float64(n) / 1000 }

// ready waits for the agent to answer get_state (it is up and idle).
func ready(a *driver.Agent) error {
	l, _, err := a.Call(map[string]any{"type": "get_state"})
	if err == nil && !l.Success {
		err = fmt.Errorf("get_state failed: %s", l.Error)
	}
	return err
}

// closeAgent stops the agent and checks it exited cleanly.
func closeAgent(a *driver.Agent) (*driver.Exit, error) {
	e, err := a.Close()
	if err == nil && e.Code != 0 {
		err = fmt.Errorf("agent exited with code %d", e.Code)
	}
	return e, err
}

// 1. Cold start: process start → get_state response; idle and peak RSS.
func (b *bench) coldStart() error {
	startR := b.result("cold start", "process start → get_state response", "ms", "≤ 10 ms", 10)
	readyR := b.result("cold start", "process start → ready line", "ms", "", 0)
	idleR := b.result("cold start", "idle RSS after get_state (VmRSS)", "MB", "≤ 20 MB", 20)
	peakR := b.result("cold start", "peak RSS, start to exit (VmHWM)", "MB", "", 0)
	cpuR := b.result("cold start", "CPU time, start to exit", "ms", "", 0)
	return b.repeat(func(record bool) error {
		a, err := b.start(b.workDir, "--model", "mock/mock-model", "--no-session")
		if err != nil {
			return err
		}
		// get_state is written at once; the agent reads it when it is up.
		id, _, err := a.Send(map[string]any{"type": "get_state"})
		if err != nil {
			a.Kill()
			return err
		}
		resp, err := a.WaitResponse(0, id)
		if err != nil {
			a.Kill()
			return err
		}
		if !resp.Success {
			a.Kill()
			return fmt.Errorf("get_state: %s", resp.Error)
		}
		_, readyLine, err := a.WaitEvent(0, "ready")
		if err != nil {
			a.Kill()
			return err
		}
		rss, _, _ := a.Memory()
		e, err := closeAgent(a)
		if err != nil {
			return err
		}
		if record {
			startR.Runs = append(startR.Runs, ms(resp.T.Sub(a.Started)))
			readyR.Runs = append(readyR.Runs, ms(readyLine.T.Sub(a.Started)))
			idleR.Runs = append(idleR.Runs, mb(rss))
			peakR.Runs = append(peakR.Runs, mb(e.Peak()))
			cpuR.Runs = append(cpuR.Runs, ms(e.CPU))
		}
		return nil
	})
}

// settled waits for the end of the run that starts after from: agent_settled,
// or, for an agent that has no such event, agent_end (with a note).
func settled(a *driver.Agent, from int) (driver.Line, bool, error) {
	i, end, err := a.WaitEvent(from, "agent_end")
	if err != nil {
		return end, false, err
	}
	_, s, err := a.WaitWithin(3*time.Second, i, "agent_settled", func(l *driver.Line) bool { return l.Type == "agent_settled" })
	if err != nil {
		return end, false, nil
	}
	return s, true, nil
}

// 2. A tool turn: bash `echo hello`, then a final text: prompt → agent_settled.
func (b *bench) toolTurn() error {
	b.mock.SetScript(mockllm.Script{Turns: []mockllm.Turn{
		{Text: "Running it.", TextChunks: 3, ToolCalls: []mockllm.ToolCall{{Name: "bash", Arguments: `{"command":"echo hello"}`, ArgChunks: 3}}},
		{Text: "The command printed hello.", TextChunks: 5},
	}})
	for _, p := range []struct{ label, model string }{
		{"OpenAI completions", "mock/mock-model"},
		{"Anthropic messages", "mock-anthropic/mock-model"},
	} {
		r := b.result("tool turn", "prompt → agent_settled ("+p.label+")", "ms", "", 0)
		endR := b.result("tool turn", "prompt → agent_end ("+p.label+")", "ms", "", 0)
		sessions := filepath.Join(b.tmp, "tool-sessions")
		err := b.repeat(func(record bool) error {
			a, err := b.start(b.workDir, "--model", p.model, "--session-dir", sessions)
			if err != nil {
				return err
			}
			if err := ready(a); err != nil {
				a.Kill()
				return err
			}
			from := a.Mark()
			_, t0, err := b.prompt(a, "run echo hello")
			if err != nil {
				a.Kill()
				return err
			}
			done, isSettled, err := settled(a, from)
			if err != nil {
				a.Kill()
				return err
			}
			_, end, _ := a.WaitEvent(from, "agent_end")
			// The tool must have run and printed hello.
			_, te, err := a.WaitWithin(time.Millisecond, from, "tool_execution_end", func(l *driver.Line) bool { return l.Type == "tool_execution_end" })
			if err != nil {
				a.Kill()
				return fmt.Errorf("no tool_execution_end in the tool turn (%s)", p.label)
			}
			if te.Raw != nil && !strings.Contains(string(te.Raw), "hello") {
				a.Kill()
				return fmt.Errorf("the bash tool did not print hello: %.300s", te.Raw)
			}
			b.trace(a, from, t0)
			if _, err := closeAgent(a); err != nil {
				return err
			}
			if !isSettled {
				r.Note = "no agent_settled: agent_end used"
			}
			if record {
				r.Runs = append(r.Runs, ms(done.T.Sub(t0)))
				endR.Runs = append(endR.Runs, ms(end.T.Sub(t0)))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// trace prints the lines since from with their times relative to t0.
func (b *bench) trace(a *driver.Agent, from int, t0 time.Time) {
	if !b.cfg.trace {
		return
	}
	for _, l := range a.Lines(from, -1) {
		fmt.Fprintf(os.Stderr, "  %8.3f ms  %6d B  %s %s\n", ms(l.T.Sub(t0)), l.Size, l.Type, l.Command)
	}
}

// prompt sends a prompt and checks its response.
func (b *bench) prompt(a *driver.Agent, msg string) (driver.Line, time.Time, error) {
	from := a.Mark()
	id, t0, err := a.Send(map[string]any{"type": "prompt", "message": msg})
	if err != nil {
		return driver.Line{}, t0, err
	}
	resp, err := a.WaitResponse(from, id)
	if err == nil && !resp.Success {
		err = fmt.Errorf("prompt failed: %s", resp.Error)
	}
	return resp, t0, err
}

// 3. One reply of N small text deltas.
func (b *bench) deltaReply() error {
	n := b.cfg.deltas
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = fmt.Sprintf("w%d ", i%1000)
	}
	b.mock.SetScript(mockllm.Script{Turns: []mockllm.Turn{{Deltas: deltas, OutputTokens: n}}})
	variants := []struct {
		label string
		args  []string
		kbMax float64
	}{{"default delta interval", nil, 200}}
	if b.isPisces {
		variants = append(variants, struct {
			label string
			args  []string
			kbMax float64
		}{"--rpc-delta-interval 0", []string{"--rpc-delta-interval", "0"}, 1400})
	}
	full := n == 5000 // the size the targets are set for
	if err := b.streamFloor(n); err != nil {
		return err
	}
	for _, v := range variants {
		g := fmt.Sprintf("%d deltas, %s", n, v.label)
		tt, tl := target(full, "≤ 80 ms", 80)
		timeR := b.result(g, "prompt → agent_end", "ms", tt, tl)
		framesR := b.result(g, "frames on stdout (prompt → agent_end)", "frames", "", 0)
		updR := b.result(g, "message_update frames", "frames", "", 0)
		fpsR := b.result(g, "frames per second", "count", "", 0)
		tt, tl = target(full, fmt.Sprintf("≤ %.0f kB", v.kbMax), v.kbMax)
		bytesR := b.result(g, "stdout bytes (prompt → agent_end)", "kB", tt, tl)
		tt, tl = target(full, "≤ 50 ms", 50)
		cpuR := b.result(g, "agent CPU, prompt → agent_end", "ms", tt, tl)
		cpuAllR := b.result(g, "agent CPU, whole process", "ms", "", 0)
		tt, tl = target(full, "≤ 25 MB", 25)
		rssR := b.result(g, "peak RSS (VmHWM)", "MB", tt, tl)
		err := b.repeat(func(record bool) error {
			args := append([]string{"--model", "mock/mock-model", "--no-session"}, v.args...)
			a, err := b.start(b.workDir, args...)
			if err != nil {
				return err
			}
			if err := ready(a); err != nil {
				a.Kill()
				return err
			}
			cpu0, _ := a.CPU()
			from := a.Mark()
			_, t0, err := b.prompt(a, "write a long answer")
			if err != nil {
				a.Kill()
				return err
			}
			i, end, err := a.WaitEvent(from, "agent_end")
			if err != nil {
				a.Kill()
				return err
			}
			cpu1, _ := a.CPU()
			b.trace(a, from, t0)
			lines := a.Lines(from, i+1)
			var bytes int64
			upd := 0
			for _, l := range lines {
				bytes += int64(l.Size)
				if l.Type == "message_update" {
					upd++
				}
			}
			e, err := closeAgent(a)
			if err != nil {
				return err
			}
			if upd == 0 {
				return errors.New("no message_update frames in the reply")
			}
			if record {
				d := end.T.Sub(t0)
				timeR.Runs = append(timeR.Runs, ms(d))
				framesR.Runs = append(framesR.Runs, float64(len(lines)))
				updR.Runs = append(updR.Runs, float64(upd))
				fpsR.Runs = append(fpsR.Runs, float64(len(lines))/d.Seconds())
				bytesR.Runs = append(bytesR.Runs, kb(bytes))
				cpuR.Runs = append(cpuR.Runs, ms(cpu1-cpu0))
				cpuAllR.Runs = append(cpuAllR.Runs, ms(e.CPU))
				rssR.Runs = append(rssR.Runs, mb(e.Peak()))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// streamFloor times the mock's reply of n deltas read by a bare HTTP
// client: the part of the reply time that is the mock and loopback, not
// the agent.
func (b *bench) streamFloor(n int) error {
	r := b.result(fmt.Sprintf("%d deltas", n), "floor: the mock's SSE stream read by a bare HTTP client", "ms", "", 0)
	body := `{"model":"mock-model","stream":true,"messages":[{"role":"user","content":"go"}]}`
	return b.repeat(func(record bool) error {
		t0 := time.Now()
		resp, err := http.Post(b.mock.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if !bytes.HasSuffix(bytes.TrimSpace(data), []byte("[DONE]")) {
			return errors.New("mock stream did not end with [DONE]")
		}
		if record {
			r.Runs = append(r.Runs, ms(time.Since(t0)))
		}
		return nil
	})
}

// call sends a command and records its time, or notes its failure.
func call(a *driver.Agent, cmd map[string]any, r *Result, record bool) (driver.Line, bool, error) {
	return callWithin(a, 0, cmd, r, record)
}

// callWithin is call with its own timeout (0 = the agent's).
func callWithin(a *driver.Agent, timeout time.Duration, cmd map[string]any, r *Result, record bool) (driver.Line, bool, error) {
	l, d, err := a.CallWithin(timeout, cmd)
	if err != nil {
		return l, false, err
	}
	if !l.Success {
		r.Note = "failed: " + l.Error
		return l, false, nil
	}
	if record {
		r.Runs = append(r.Runs, ms(d))
	}
	return l, true, nil
}

// 4. switch_session to a big session, then get_messages.
func (b *bench) switchSession() error {
	path, err := sessgen.WriteFile(filepath.Join(b.dataDir, "switch"), sessgen.Options{Entries: b.cfg.switchN, Seed: 20000, Cwd: b.workDir})
	if err != nil {
		return err
	}
	g := fmt.Sprintf("open %d entries", b.cfg.switchN)
	tt, tl := target(b.cfg.switchN == 20000, "≤ 25 ms", 25)
	swR := b.result(g, "switch_session", "ms", tt, tl)
	msgR := b.result(g, "then get_messages", "ms", "", 0)
	sizeR := b.result(g, "get_messages response", "MB", "", 0)
	rssR := b.result(g, "peak RSS (VmHWM)", "MB", "", 0)
	return b.repeat(func(record bool) error {
		a, err := b.start(b.workDir, "--model", "mock/mock-model")
		if err != nil {
			return err
		}
		if err := ready(a); err != nil {
			a.Kill()
			return err
		}
		if _, ok, err := call(a, map[string]any{"type": "switch_session", "sessionPath": path}, swR, record); err != nil || !ok {
			a.Kill()
			if err == nil {
				err = errors.New("switch_session " + swR.Note)
			}
			return err
		}
		l, ok, err := call(a, map[string]any{"type": "get_messages"}, msgR, record)
		if err != nil {
			a.Kill()
			return err
		}
		e, err := closeAgent(a)
		if err != nil {
			return err
		}
		if record {
			if ok {
				sizeR.Runs = append(sizeR.Runs, mb(int64(l.Size)))
			}
			rssR.Runs = append(rssR.Runs, mb(e.Peak()))
		}
		return nil
	})
}

// 5. list_sessions over many sessions: first call in a fresh process, again.
func (b *bench) listSessions() error {
	dir := sessionDirFor(b.agentDir, b.listDir)
	fmt.Fprintf(b.log, "rpcbench: writing %d sessions into %s\n", b.cfg.listN, dir)
	if err := sessgen.WriteMany(dir, b.cfg.listN, b.cfg.listEach, b.listDir); err != nil {
		return err
	}
	g := fmt.Sprintf("list %d sessions × %d entries", b.cfg.listN, b.cfg.listEach)
	full := b.cfg.listN == 2000 && b.cfg.listEach == 50
	tt, tl := target(full, "≤ 100 ms", 100)
	firstR := b.result(g, "list_sessions, first call", "ms", tt, tl)
	tt, tl = target(full, "≤ 20 ms", 20)
	againR := b.result(g, "list_sessions, again", "ms", tt, tl)
	sizeR := b.result(g, "list_sessions response", "MB", "", 0)
	rssR := b.result(g, "peak RSS (VmHWM)", "MB", "", 0)
	return b.repeat(func(record bool) error {
		a, err := b.start(b.listDir, "--model", "mock/mock-model")
		if err != nil {
			return err
		}
		if err := ready(a); err != nil {
			a.Kill()
			return err
		}
		l, ok, err := call(a, map[string]any{"type": "list_sessions"}, firstR, record)
		if err != nil {
			a.Kill()
			return err
		}
		if ok {
			if want := fmt.Sprintf(`"total":%d`, b.cfg.listN); l.Raw != nil && !strings.Contains(string(l.Raw), want) {
				firstR.Note = "unexpected answer (not " + want + ")"
			}
			if _, _, err := call(a, map[string]any{"type": "list_sessions"}, againR, record); err != nil {
				a.Kill()
				return err
			}
		} else {
			againR.Note = firstR.Note
		}
		e, err := closeAgent(a)
		if err != nil {
			return err
		}
		if record && ok {
			sizeR.Runs = append(sizeR.Runs, mb(int64(l.Size)))
			rssR.Runs = append(rssR.Runs, mb(e.Peak()))
		}
		return nil
	})
}

// sessionDirFor is pi's per-cwd session directory.
func sessionDirFor(agentDir, cwd string) string {
	s := strings.TrimPrefix(cwd, "/")
	s = strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(s)
	return filepath.Join(agentDir, "sessions", "--"+s+"--")
}

// 6. get_session_tree (and get_tree) on a very big session.
func (b *bench) sessionTree() error {
	path, err := sessgen.WriteFile(filepath.Join(b.dataDir, "tree"), sessgen.Options{Entries: b.cfg.treeN, Seed: 100000, Cwd: b.workDir, BranchEvery: 500, LabelEvery: 1000})
	if err != nil {
		return err
	}
	g := fmt.Sprintf("tree of %d entries", b.cfg.treeN)
	openR := b.result(g, "switch_session (setup)", "ms", "", 0)
	tt, tl := target(b.cfg.treeN == 100000, "≤ 100 ms", 100)
	treeR := b.result(g, "get_session_tree", "ms", tt, tl)
	treeSize := b.result(g, "get_session_tree response", "MB", "", 0)
	browseR := b.result(g, "get_session_tree {view: browse}", "ms", "", 0)
	getTreeR := b.result(g, "get_tree (pi's nested form)", "ms", "", 0)
	getTreeSize := b.result(g, "get_tree response", "MB", "", 0)
	silent := map[*Result]bool{} // commands that never answered: not asked again
	wait := 15 * time.Second
	if b.cfg.short {
		wait = 5 * time.Second
	}
	return b.repeat(func(record bool) error {
		a, err := b.start(b.workDir, "--model", "mock/mock-model")
		if err != nil {
			return err
		}
		if err := ready(a); err != nil {
			a.Kill()
			return err
		}
		if _, ok, err := call(a, map[string]any{"type": "switch_session", "sessionPath": path}, openR, record); err != nil || !ok {
			a.Kill()
			if err == nil {
				err = errors.New("switch_session " + openR.Note)
			}
			return err
		}
		steps := []struct {
			cmd  map[string]any
			r, s *Result
		}{
			{map[string]any{"type": "get_session_tree"}, treeR, treeSize},
			{map[string]any{"type": "get_session_tree", "view": "browse"}, browseR, nil},
			{map[string]any{"type": "get_tree"}, getTreeR, getTreeSize},
		}
		for _, s := range steps {
			if silent[s.r] {
				continue
			}
			l, ok, err := callWithin(a, wait, s.cmd, s.r, record)
			if err != nil {
				// No answer at all (seen with get_tree on deep trees): note
				// it with the agent's stderr and go on with a new process.
				a.Kill()
				silent[s.r] = true
				s.r.Note = fmt.Sprintf("no response (%v); agent stderr: %s", err, strings.TrimSpace(b.stderr.String()))
				return nil
			}
			if ok && record && s.s != nil {
				s.s.Runs = append(s.s.Runs, mb(int64(l.Size)))
			}
		}
		_, err = closeAgent(a)
		return err
	})
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
