package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/bench/driver"
	"github.com/pisces-agent/pisces/bench/mockllm"
	"github.com/pisces-agent/pisces/bench/sessgen"
)

type step struct {
	name string
	fn   func() error
}

// steps are the measurements in the order they run.
func (b *bench) steps() []step {
	return []step{
		{"cold", b.coldStart},
		{"init", b.packageInit},
		{"tool", b.toolTurn},
		{"deltas", b.deltaReply},
		{"switch", b.switchSession},
		{"list", b.listSessions},
		{"tree", b.sessionTree},
		{"stall", b.stalledClient},
		{"bigprompt", b.bigPrompt},
	}
}

func stepNames() []string {
	var names []string
	for _, s := range (&bench{}).steps() {
		names = append(names, s.name)
	}
	return names
}

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

// startReady starts a process of ag and waits until it answers get_state.
func (b *bench) startReady(ag *agent, dir string, args ...string) (*driver.Agent, error) {
	a, err := b.start(ag, dir, args...)
	if err != nil {
		return nil, err
	}
	if err := ready(a); err != nil {
		a.Kill()
		return nil, err
	}
	return a, nil
}

// 1. Cold start: process start → get_state response; idle and peak RSS.
func (b *bench) coldStart() error {
	b.alternate(func(ag *agent) func(bool) error {
		startR := b.result(ag, "cold start", "process start → get_state response", "ms", "≤ 10 ms", 10)
		var readyR *Result
		if ag.isPisces { // the ready line is Pisces' own
			readyR = b.result(ag, "cold start", "process start → ready line", "ms", "", 0)
		}
		idleR := b.result(ag, "cold start", "idle RSS after get_state (VmRSS)", "MB", "≤ 20 MB", 20)
		peakR := b.result(ag, "cold start", "peak RSS, start to exit (VmHWM)", "MB", "", 0)
		cpuR := b.result(ag, "cold start", "CPU time, start to exit", "ms", "", 0)
		return func(record bool) error {
			a, err := b.start(ag, b.workDir, "--model", "mock/mock-model", "--no-session")
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
			var readyLine driver.Line
			if readyR != nil {
				if _, readyLine, err = a.WaitEvent(0, "ready"); err != nil {
					a.Kill()
					return err
				}
			}
			rss, _, _ := a.Memory()
			e, err := closeAgent(a)
			if err != nil {
				return err
			}
			if record {
				startR.Runs = append(startR.Runs, ms(resp.T.Sub(a.Started)))
				if readyR != nil {
					readyR.Runs = append(readyR.Runs, ms(readyLine.T.Sub(a.Started)))
				}
				idleR.Runs = append(idleR.Runs, mb(rss))
				peakR.Runs = append(peakR.Runs, mb(e.Peak()))
				cpuR.Runs = append(cpuR.Runs, ms(e.CPU))
			}
			return nil
		}
	})
	return nil
}

// inittraceLine is one line of GODEBUG=inittrace=1: the package, when its
// init started (ms since the process started), its clock time, bytes and
// allocations.
var inittraceLine = regexp.MustCompile(`(?m)^init (\S+) @([0-9.]+) ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

// initTrace sums the package initialisation lines of a Go program's stderr.
func initTrace(stderr string) (packages int, clock, end float64, bytes int64) {
	for _, m := range inittraceLine.FindAllStringSubmatch(stderr, -1) {
		at, _ := strconv.ParseFloat(m[2], 64)
		c, _ := strconv.ParseFloat(m[3], 64)
		n, _ := strconv.ParseInt(m[4], 10, 64)
		packages++
		clock += c
		bytes += n
		end = max(end, at+c)
	}
	return packages, clock, end, bytes
}

// 1b. Package initialisation of a Go agent (Pisces): GODEBUG=inittrace=1,
// every package's init summed.
func (b *bench) packageInit() error {
	b.alternate(func(ag *agent) func(bool) error {
		if !ag.isPisces {
			return nil
		}
		g := "package init (GODEBUG=inittrace=1)"
		clockR := b.result(ag, g, "all packages, clock time summed", "ms", "", 0)
		endR := b.result(ag, g, "process start → last init done", "ms", "", 0)
		bytesR := b.result(ag, g, "allocated by init", "MB", "", 0)
		pkgR := b.result(ag, g, "packages traced", "count", "", 0)
		return func(record bool) error {
			stderr := &tail{max: 1 << 20}
			a, err := b.startWith(ag, b.workDir, startOpts{env: []string{"GODEBUG=inittrace=1"}, stderr: stderr},
				"--model", "mock/mock-model", "--no-session")
			if err != nil {
				return err
			}
			if err := ready(a); err != nil {
				a.Kill()
				return err
			}
			if _, err := closeAgent(a); err != nil {
				return err
			}
			n, clock, end, allocated := initTrace(stderr.String())
			if n == 0 {
				return errors.New("no inittrace lines on stderr (not a Go program?)")
			}
			if record {
				clockR.Runs = append(clockR.Runs, clock)
				endR.Runs = append(endR.Runs, end)
				bytesR.Runs = append(bytesR.Runs, mb(allocated))
				pkgR.Runs = append(pkgR.Runs, float64(n))
			}
			return nil
		}
	})
	return nil
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
		b.alternate(func(ag *agent) func(bool) error {
			r := b.result(ag, "tool turn", "prompt → agent_settled ("+p.label+")", "ms", "", 0)
			endR := b.result(ag, "tool turn", "prompt → agent_end ("+p.label+")", "ms", "", 0)
			sessions := filepath.Join(b.tmp, "tool-sessions-"+ag.name)
			return func(record bool) error {
				a, err := b.startReady(ag, b.workDir, "--model", p.model, "--session-dir", sessions)
				if err != nil {
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
			}
		})
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
		label      string
		args       []string
		kbMax      float64
		piscesOnly bool
	}{
		{"default delta interval", nil, 200, false},
		{"--rpc-delta-interval 0", []string{"--rpc-delta-interval", "0"}, 1400, true}, // the flag is Pisces'
	}
	full := n == 5000 // the size the targets are set for
	if err := b.streamFloor(n); err != nil {
		return err
	}
	for _, v := range variants {
		g := fmt.Sprintf("%d deltas, %s", n, v.label)
		b.alternate(func(ag *agent) func(bool) error {
			if v.piscesOnly && !ag.isPisces {
				return nil
			}
			tt, tl := target(full, "≤ 80 ms", 80)
			timeR := b.result(ag, g, "prompt → agent_end", "ms", tt, tl)
			ackR := b.result(ag, g, "prompt → its response", "ms", "", 0)
			framesR := b.result(ag, g, "frames on stdout (prompt → agent_end)", "frames", "", 0)
			updR := b.result(ag, g, "message_update frames", "frames", "", 0)
			fpsR := b.result(ag, g, "frames per second", "count", "", 0)
			tt, tl = target(full, fmt.Sprintf("≤ %.0f kB", v.kbMax), v.kbMax)
			bytesR := b.result(ag, g, "stdout bytes (prompt → agent_end)", "kB", tt, tl)
			tt, tl = target(full, "≤ 50 ms", 50)
			cpuR := b.result(ag, g, "agent CPU, prompt → agent_end", "ms", tt, tl)
			cpuAllR := b.result(ag, g, "agent CPU, whole process", "ms", "", 0)
			tt, tl = target(full, "≤ 25 MB", 25)
			rssR := b.result(ag, g, "peak RSS (VmHWM)", "MB", tt, tl)
			return func(record bool) error {
				args := append([]string{"--model", "mock/mock-model", "--no-session"}, v.args...)
				a, err := b.startReady(ag, b.workDir, args...)
				if err != nil {
					return err
				}
				cpu0, _ := a.CPU()
				from := a.Mark()
				resp, t0, err := b.prompt(a, "write a long answer")
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
					ackR.Runs = append(ackR.Runs, ms(resp.T.Sub(t0)))
					framesR.Runs = append(framesR.Runs, float64(len(lines)))
					updR.Runs = append(updR.Runs, float64(upd))
					fpsR.Runs = append(fpsR.Runs, float64(len(lines))/d.Seconds())
					bytesR.Runs = append(bytesR.Runs, kb(bytes))
					cpuR.Runs = append(cpuR.Runs, ms(cpu1-cpu0))
					cpuAllR.Runs = append(cpuAllR.Runs, ms(e.CPU))
					rssR.Runs = append(rssR.Runs, mb(e.Peak()))
				}
				return nil
			}
		})
	}
	return nil
}

// streamFloor times the mock's reply of n deltas read by a bare HTTP
// client: the part of the reply time that is the mock and loopback, not
// the agent.
func (b *bench) streamFloor(n int) error {
	r := b.sharedResult(fmt.Sprintf("%d deltas", n), "floor: the mock's SSE stream read by a bare HTTP client", "ms")
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

// callCPU is call that also records the agent's CPU time from the
// command's write to the arrival of its response (in cpuR).
func callCPU(a *driver.Agent, cmd map[string]any, r, cpuR *Result, record bool) (driver.Line, bool, error) {
	cpu0, _ := a.CPU()
	l, ok, err := call(a, cmd, r, record)
	if ok && record {
		cpu1, _ := a.CPU()
		cpuR.Runs = append(cpuR.Runs, ms(cpu1-cpu0))
	}
	return l, ok, err
}

// 4. switch_session to a big session, then get_messages and get_entries.
func (b *bench) switchSession() error {
	path, err := sessgen.WriteFile(filepath.Join(b.dataDir, "switch"), sessgen.Options{Entries: b.cfg.switchN, Seed: 20000, Cwd: b.workDir})
	if err != nil {
		return err
	}
	g := fmt.Sprintf("open %d entries", b.cfg.switchN)
	b.alternate(func(ag *agent) func(bool) error {
		tt, tl := target(b.cfg.switchN == 20000, "≤ 25 ms", 25)
		swR := b.result(ag, g, "switch_session", "ms", tt, tl)
		msgR := b.result(ag, g, "then get_messages", "ms", "", 0)
		msgCPU := b.result(ag, g, "get_messages: agent CPU", "ms", "", 0)
		sizeR := b.result(ag, g, "get_messages response", "MB", "", 0)
		entR := b.result(ag, g, "then get_entries", "ms", "", 0)
		entCPU := b.result(ag, g, "get_entries: agent CPU", "ms", "", 0)
		entSize := b.result(ag, g, "get_entries response", "MB", "", 0)
		rssR := b.result(ag, g, "peak RSS (VmHWM)", "MB", "", 0)
		return func(record bool) error {
			a, err := b.startReady(ag, b.workDir, "--model", "mock/mock-model")
			if err != nil {
				return err
			}
			if _, ok, err := call(a, map[string]any{"type": "switch_session", "sessionPath": path}, swR, record); err != nil || !ok {
				a.Kill()
				if err == nil {
					err = errors.New("switch_session " + swR.Note)
				}
				return err
			}
			l, ok, err := callCPU(a, map[string]any{"type": "get_messages"}, msgR, msgCPU, record)
			if err != nil {
				a.Kill()
				return err
			}
			if ok && record {
				sizeR.Runs = append(sizeR.Runs, mb(int64(l.Size)))
			}
			l, ok, err = callCPU(a, map[string]any{"type": "get_entries"}, entR, entCPU, record)
			if err != nil {
				a.Kill()
				return err
			}
			if ok && record {
				entSize.Runs = append(entSize.Runs, mb(int64(l.Size)))
			}
			e, err := closeAgent(a)
			if err != nil {
				return err
			}
			if record {
				rssR.Runs = append(rssR.Runs, mb(e.Peak()))
			}
			return nil
		}
	})
	return nil
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
	b.alternate(func(ag *agent) func(bool) error {
		tt, tl := target(full, "≤ 100 ms", 100)
		firstR := b.result(ag, g, "list_sessions, first call", "ms", tt, tl)
		tt, tl = target(full, "≤ 20 ms", 20)
		againR := b.result(ag, g, "list_sessions, again", "ms", tt, tl)
		sizeR := b.result(ag, g, "list_sessions response", "MB", "", 0)
		rssR := b.result(ag, g, "peak RSS (VmHWM)", "MB", "", 0)
		return func(record bool) error {
			a, err := b.startReady(ag, b.listDir, "--model", "mock/mock-model")
			if err != nil {
				return err
			}
			l, ok, err := call(a, map[string]any{"type": "list_sessions"}, firstR, record)
			if err != nil {
				a.Kill()
				return err
			}
			if !ok {
				// The agent does not have the command: asked once.
				againR.Note = firstR.Note
				if _, err := closeAgent(a); err != nil {
					return err
				}
				return errStop
			}
			if want := fmt.Sprintf(`"total":%d`, b.cfg.listN); l.Raw != nil && !strings.Contains(string(l.Raw), want) {
				firstR.Note = "unexpected answer (not " + want + ")"
			}
			if _, _, err := call(a, map[string]any{"type": "list_sessions"}, againR, record); err != nil {
				a.Kill()
				return err
			}
			e, err := closeAgent(a)
			if err != nil {
				return err
			}
			if record {
				sizeR.Runs = append(sizeR.Runs, mb(int64(l.Size)))
				rssR.Runs = append(rssR.Runs, mb(e.Peak()))
			}
			return nil
		}
	})
	return nil
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
	wait := 15 * time.Second
	if b.cfg.short {
		wait = 5 * time.Second
	}
	b.alternate(func(ag *agent) func(bool) error {
		openR := b.result(ag, g, "switch_session (setup)", "ms", "", 0)
		tt, tl := target(b.cfg.treeN == 100000, "≤ 100 ms", 100)
		treeR := b.result(ag, g, "get_session_tree", "ms", tt, tl)
		treeSize := b.result(ag, g, "get_session_tree response", "MB", "", 0)
		browseR := b.result(ag, g, "get_session_tree {view: browse}", "ms", "", 0)
		getTreeR := b.result(ag, g, "get_tree (pi's nested form)", "ms", "", 0)
		getTreeSize := b.result(ag, g, "get_tree response", "MB", "", 0)
		// Commands that never answered, or that the agent does not
		// have, are not asked again.
		skip := map[*Result]bool{}
		return func(record bool) error {
			a, err := b.startReady(ag, b.workDir, "--model", "mock/mock-model")
			if err != nil {
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
				if skip[s.r] {
					continue
				}
				l, ok, err := callWithin(a, wait, s.cmd, s.r, record)
				if err != nil {
					// No answer at all (seen with get_tree on deep trees): note
					// it with the agent's stderr and go on with a new process.
					a.Kill()
					skip[s.r] = true
					s.r.Note = fmt.Sprintf("no response (%v); agent stderr: %s", err, strings.TrimSpace(b.stderr.String()))
					return nil
				}
				if !ok && strings.HasPrefix(l.Error, "Unknown command") {
					skip[s.r] = true
				}
				if ok && record && s.s != nil {
					s.s.Runs = append(s.s.Runs, mb(int64(l.Size)))
				}
			}
			_, err = closeAgent(a)
			return err
		}
	})
	return nil
}
