// Command rpcbench measures an agent that speaks pi's RPC protocol the way a
// client feels it: cold start, a tool turn, a long streamed reply, opening,
// listing and browsing big sessions. The agent talks to a local mock LLM
// server (bench/mockllm) through a models.json custom provider in a
// temporary agent dir; big session files are generated (bench/sessgen).
//
//	go run ./bench/rpcbench                      # Pisces, built from this checkout
//	go run ./bench/rpcbench -short               # CI: 2 runs, small sizes
//	go run ./bench/rpcbench -compare-pi          # Pisces and pi, runs alternating
//	go run ./bench/rpcbench -agent "pi --mode rpc" -json pi.json
//
// -compare-pi measures Pisces and pi (pi 1.5.2 from npm,
// @earendil-works/pi-coding-agent; the command is $NODE $PI_CLI, or -pi) in
// one run: every measurement alternates between the two agents run by run
// (Pisces, pi, Pisces, pi, …), so that a change of the machine's load
// reaches both alike, and the table gives both medians and their ratio.
//
// The agent dir is passed as PISCES_CODING_AGENT_DIR and PI_CODING_AGENT_DIR,
// and HOME is a temporary directory too, so any agent reading either finds
// the mock provider and nothing touches the user's own configuration.
// Figures are printed as a Markdown table next to their targets
// (docs/performance.md); -json writes them all.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	"github.com/pisces-agent/pisces/bench/internal/coldcache"
	"github.com/pisces-agent/pisces/bench/mockllm"
)

// benchTools is the tool set every measured agent runs with (pi's default).
const benchTools = "read,bash,edit,write"

type config struct {
	agent     string
	extra     string
	comparePi bool
	pi        string
	runs      int
	warmup    int
	short     bool
	jsonOut   string
	only      string
	keep      bool
	timeout   time.Duration
	verbose   bool
	trace     bool
	profile   string
	deltas    int
	switchN   int
	listN     int
	listEach  int
	treeN     int
	promptMB  int
	stallFor  time.Duration
}

// agent is one measured agent command and its rows.
type agent struct {
	name     string   // "Pisces", "pi"
	argv     []string // the command with --mode rpc and the common arguments
	display  []string // argv as printed
	version  string   // what --version printed
	isPisces bool
	built    bool // Pisces built by the harness (profiling applies)
	results  []*Result
	failures []string
}

// bench holds what every measurement shares.
type bench struct {
	cfg      config
	agents   []*agent // measured alternately, the first is the base of the ratios
	tmp      string
	agentDir string
	home     string // HOME of the agents
	workDir  string // cwd of the agents (no sessions listed here)
	listDir  string // cwd of the list_sessions agents
	dataDir  string // generated session files
	env      []string
	mock     *mockllm.Server
	shared   []*Result // rows that measure no agent (compare mode)
	log      io.Writer
	phase    string // the running measurement (profile file names)
	stderr   *tail  // the last started agent's stderr
	nproc    int
}

func main() {
	var c config
	flag.StringVar(&c.agent, "agent", "", `agent command (default: Pisces built from this checkout), e.g. "pi --mode rpc"`)
	flag.StringVar(&c.extra, "agent-args", "", "extra arguments for every agent start (every agent)")
	flag.BoolVar(&c.comparePi, "compare-pi", false, "measure Pisces and pi alternately in one run, with ratios (pi: -pi, or $NODE $PI_CLI)")
	flag.StringVar(&c.pi, "pi", "", `pi's command without --mode rpc for -compare-pi (default "$NODE $PI_CLI")`)
	flag.IntVar(&c.runs, "runs", 5, "runs per measurement (median, min, max)")
	flag.IntVar(&c.warmup, "warmup", 1, "unrecorded runs before each measurement")
	flag.BoolVar(&c.short, "short", false, "CI mode: 2 runs, no warm-up, small sizes")
	flag.StringVar(&c.jsonOut, "json", "", "write the results as JSON to this file")
	flag.StringVar(&c.only, "only", "", "comma-separated measurements: "+strings.Join(stepNames(), ",")+" (stall and bigprompt only when named)")
	flag.IntVar(&c.promptMB, "prompt-mb", 50, "size of the bigprompt measurement's prompt, in MB")
	flag.DurationVar(&c.stallFor, "stall-for", 8*time.Second, "how long the stall measurement's client stops reading")
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

// piCommand is pi's command for -compare-pi: -pi, or $NODE $PI_CLI (then
// fromEnv is true).
func piCommand(c config) (argv []string, fromEnv bool, err error) {
	if c.pi != "" {
		return strings.Fields(c.pi), false, nil
	}
	node, cli := os.Getenv("NODE"), os.Getenv("PI_CLI")
	if cli == "" {
		return nil, false, errors.New("-compare-pi needs pi: set NODE (a Node.js ≥ 22.19 binary; default node) and PI_CLI " +
			"(dist/bundle/cli.js of the npm package @earendil-works/pi-coding-agent@1.5.2), or pass -pi \"COMMAND\"")
	}
	if node == "" {
		node = "node"
	}
	return []string{node, cli}, true, nil
}

func run(c config) error {
	b := &bench{cfg: c, log: io.Discard}
	if c.verbose {
		b.log = os.Stderr
	}
	var piArgv []string
	var piFromEnv bool
	if c.comparePi {
		var err error
		if piArgv, piFromEnv, err = piCommand(c); err != nil {
			return err
		}
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
		// close when this process ends). Not SIGPIPE: with it caught, a
		// write to any closed socket raises it too (the mock writing to an
		// agent that aborted its request), not only a closed stdout.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sig
			os.RemoveAll(tmp)
			os.Exit(130)
		}()
	}
	b.agentDir = filepath.Join(tmp, "agent")
	b.home = filepath.Join(tmp, "home")
	b.workDir = filepath.Join(tmp, "work")
	b.listDir = filepath.Join(tmp, "work-list")
	b.dataDir = filepath.Join(tmp, "data")
	for _, d := range []string{b.agentDir, b.home, b.workDir, b.listDir, b.dataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	base := &agent{name: "Pisces"}
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
		// Started as an installed binary is: read from disk, in the
		// page-cache folios that reading it makes.
		if err := coldcache.Drop(bin); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			fmt.Fprintf(os.Stderr, "rpcbench: cannot drop the built binary from the page cache (%v); resident sizes may read high\n", err)
		}
		base.argv = []string{bin, "--mode", "rpc"}
		base.isPisces, base.built = true, true
	} else {
		base.argv = strings.Fields(c.agent)
		base.isPisces = strings.Contains(filepath.Base(base.argv[0]), "pisces")
		if !base.isPisces {
			base.name = filepath.Base(base.argv[0])
		}
	}
	b.agents = []*agent{base}
	if piArgv != nil {
		b.agents = append(b.agents, &agent{name: "pi", argv: append(piArgv, "--mode", "rpc")})
	}
	for _, ag := range b.agents {
		// The same tools for every agent: pi 1.5.2 activates read, bash,
		// edit and write, Pisces also task and todo_write, and the tool
		// list goes into every model request and system message.
		// -agent-args come after and may override it.
		ag.argv = append(ag.argv, "--tools", benchTools)
		ag.argv = append(ag.argv, strings.Fields(c.extra)...)
		ag.display = append([]string(nil), ag.argv...)
		if ag.built {
			ag.display[0] = "pisces"
		}
		if ag != base && piFromEnv {
			ag.display[0], ag.display[1] = "$NODE", "$PI_CLI"
		}
	}

	b.mock, err = mockllm.Start(mockllm.Options{IdleTimeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer b.mock.Close()
	if err := b.writeModels(); err != nil {
		return err
	}
	b.env = append(os.Environ(),
		"HOME="+b.home,
		"PISCES_CODING_AGENT_DIR="+b.agentDir,
		"PI_CODING_AGENT_DIR="+b.agentDir,
		"PI_SKIP_VERSION_CHECK=1",
		"PI_TELEMETRY=0",
	)
	for _, ag := range b.agents {
		ag.version = b.agentVersion(ag)
	}
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
	var failures []string
	for _, s := range b.steps() {
		if c.only == "" && optIn[s.name] || c.only != "" && !contains(strings.Split(c.only, ","), s.name) {
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
	for _, ag := range b.agents {
		for _, r := range ag.results {
			r.finish()
		}
		for _, f := range ag.failures {
			failures = append(failures, ag.name+": "+f)
		}
	}
	for _, r := range b.shared {
		r.finish()
	}
	load1 := loadAvg()

	host, _ := os.Hostname()
	commit := gitCommit()
	date := time.Now().UTC().Format(time.RFC3339)
	for _, ag := range b.agents {
		fmt.Printf("agent: %s\n", strings.Join(ag.display, " "))
		if ag.version != "" {
			fmt.Printf("  %s --version: %s\n", ag.name, ag.version)
		}
	}
	fmt.Printf("commit: %s\nmachine: %s, %d CPUs, %s, %s/%s\ndate: %s\nload average: %s at start, %s at end\nruns: %d (warm-up %d)%s\n\n",
		commit, cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		date, load0, load1, c.runs, c.warmup, map[bool]string{true: ", short mode", false: ""}[c.short])
	if len(b.agents) == 1 {
		printTable(os.Stdout, b.agents[0].results)
	} else {
		printCompare(os.Stdout, b.agents)
		if len(b.shared) > 0 {
			fmt.Println("\nNo agent (the mock alone):")
			fmt.Println()
			printTable(os.Stdout, b.shared)
		}
	}
	fmt.Printf("\ntotal %.1fs\n", time.Since(start).Seconds())

	if c.jsonOut != "" {
		var agents []map[string]any
		for _, ag := range b.agents {
			agents = append(agents, map[string]any{"name": ag.name, "command": ag.display, "version": ag.version,
				"pisces": ag.isPisces, "results": ag.results, "failures": ag.failures})
		}
		out := map[string]any{
			"agent": b.agents[0].display, "pisces": b.agents[0].isPisces, "date": date, "commit": commit,
			"machine":     map[string]any{"cpu": cpuModel(), "nproc": runtime.NumCPU(), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH, "host": host},
			"loadAverage": []string{load0, load1},
			"runs":        c.runs, "warmup": c.warmup, "short": c.short,
			"sizes":   map[string]int{"deltas": c.deltas, "switchEntries": c.switchN, "listSessions": c.listN, "listEntries": c.listEach, "treeEntries": c.treeN},
			"results": b.agents[0].results, "agents": agents, "shared": b.shared, "failures": failures,
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

// agentVersion is the first line the agent prints for --version (its
// command without the RPC arguments), or "" if it prints none in time.
func (b *bench) agentVersion(ag *agent) string {
	argv := ag.argv
	if i := indexOf(argv, "--mode"); i > 0 {
		argv = argv[:i]
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:len(argv):len(argv)], "--version")...)
	cmd.Env, cmd.Dir = b.env, b.workDir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	ln, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(ln)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// gitCommit is the checkout's commit, marked when it has local changes.
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " (with local changes)"
	}
	return c
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

// startOpts are the less common settings of one agent start.
type startOpts struct {
	env    []string  // added to the environment (later entries win)
	stderr io.Writer // also receives the agent's stderr
}

// start starts one process of agent ag in dir.
func (b *bench) start(ag *agent, dir string, args ...string) (*driver.Agent, error) {
	return b.startWith(ag, dir, startOpts{}, args...)
}

func (b *bench) startWith(ag *agent, dir string, o startOpts, args ...string) (*driver.Agent, error) {
	argv := append(append([]string(nil), ag.argv...), args...)
	b.stderr = &tail{max: 4096}
	ws := []io.Writer{b.stderr}
	if o.stderr != nil {
		ws = append(ws, o.stderr)
	}
	if b.cfg.verbose {
		ws = append(ws, os.Stderr)
	}
	env := append(append([]string(nil), b.env...), o.env...)
	if b.cfg.profile != "" && ag.built {
		b.nproc++
		name := fmt.Sprintf("%s-%02d", b.phase, b.nproc)
		env = append(env,
			"PISCES_CPUPROFILE="+filepath.Join(b.cfg.profile, name+".cpu.pprof"),
			"PISCES_MEMPROFILE="+filepath.Join(b.cfg.profile, name+".allocs.pprof"))
	}
	return driver.Start(driver.Config{Argv: argv, Env: env, Dir: dir, Stderr: io.MultiWriter(ws...), Timeout: b.cfg.timeout})
}

// target returns a row's target, or none (limit 0, marked in the text)
// when the measured size is not the one the target is set for.
func target(canonical bool, text string, limit float64) (string, float64) {
	if !canonical {
		return text + " (full size)", 0
	}
	return text, limit
}

// result returns a new row of agent ag. Targets are Pisces' and are only
// set on its rows.
func (b *bench) result(ag *agent, group, name, unit, target string, limit float64) *Result {
	if !ag.isPisces {
		target, limit = "", 0
	}
	r := &Result{Group: group, Name: name, Unit: unit, Target: target, Limit: limit, Runs: []float64{}}
	ag.results = append(ag.results, r)
	return r
}

// sharedResult returns a new row that measures no agent (the mock alone):
// with one agent it goes into that agent's table, else into its own.
func (b *bench) sharedResult(group, name, unit string) *Result {
	if len(b.agents) == 1 {
		return b.result(b.agents[0], group, name, unit, "", 0)
	}
	r := &Result{Group: group, Name: name, Unit: unit, Runs: []float64{}}
	b.shared = append(b.shared, r)
	return r
}

// errStop ends an agent's runs of one measurement without a failure: the
// rows' notes say why (a command the agent does not have).
var errStop = errors.New("stop")

// alternate runs one measurement for every agent: mk returns an agent's
// runner (nil: the measurement does not apply to it), and the runners run
// warm-up + runs times in turn, one run of each agent after the other
// (A B A B …), so that the machine's load changes reach all of them
// alike. record is false during warm-up. An agent whose runner fails is
// dropped from the remaining runs and the failure recorded.
func (b *bench) alternate(mk func(ag *agent) func(record bool) error) {
	type runner struct {
		ag  *agent
		run func(bool) error
	}
	var rs []runner
	for _, ag := range b.agents {
		if r := mk(ag); r != nil {
			rs = append(rs, runner{ag, r})
		}
	}
	for i := 0; i < b.cfg.warmup+b.cfg.runs; i++ {
		for j := range rs {
			r := &rs[j]
			if r.run == nil {
				continue
			}
			if err := r.run(i >= b.cfg.warmup); err != nil {
				r.run = nil
				if !errors.Is(err, errStop) {
					r.ag.failures = append(r.ag.failures, b.phase+": "+err.Error())
					fmt.Fprintf(os.Stderr, "\nrpcbench: %s, %s: %v\n", b.phase, r.ag.name, err)
				}
			}
		}
	}
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
