// Package driver starts an agent command that speaks pi's RPC protocol
// (JSONL on stdin/stdout) and times what it writes: every stdout line is
// stamped when it has fully arrived, before the driver parses anything, and
// sized, so that callers can measure latencies, frame counts and bytes. It
// also reads the agent's CPU time and memory from /proc while it runs and
// from the rusage of the exited process.
//
// Every wait has a deadline; an agent that does not stop when its stdin is
// closed is killed (with its process group).
package driver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config describes the agent process.
type Config struct {
	Argv    []string  // the command and its arguments
	Env     []string  // the full environment (nil = inherit)
	Dir     string    // working directory
	Stderr  io.Writer // the agent's stderr (nil = discarded)
	Timeout time.Duration
}

// Line is one stdout line of the agent.
type Line struct {
	T       time.Time // when its newline arrived
	Type    string    // "type" member
	ID      string    // responses: the request id
	Command string    // responses
	Success bool      // responses
	Error   string    // failed responses
	Size    int       // bytes including the newline
	Raw     []byte    // the line, kept unless it is a message_update or large
}

// KeepRawLimit: lines up to this size keep their text.
const KeepRawLimit = 64 << 10

// Agent is a running agent process.
type Agent struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	Started time.Time // just before the process was started
	timeout time.Duration

	mu      sync.Mutex
	cond    *sync.Cond
	lines   []Line
	eof     bool
	readErr error
	seq     int
	paused  bool // Pause: the reader reads nothing more until Resume
}

// Exit is what the exited process used.
type Exit struct {
	Code   int
	CPU    time.Duration // user + system
	MaxRSS int64         // bytes (ru_maxrss)
	HWM    int64         // bytes: VmHWM just before stdin was closed (0 where /proc is missing)
}

// Peak is the agent's peak resident set: VmHWM where /proc has it, else
// ru_maxrss. ru_maxrss also counts the driver's own resident set at the
// moment it started the agent (exec records the old address space's high
// water mark, and Go starts children with vfork), so it overstates an
// agent smaller than the driver.
func (e *Exit) Peak() int64 {
	if e.HWM > 0 {
		return e.HWM
	}
	return e.MaxRSS
}

// Start starts the agent and begins reading its stdout.
func Start(cfg Config) (*Agent, error) {
	if len(cfg.Argv) == 0 {
		return nil, errors.New("driver: empty command")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	cmd := exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	cmd.Env = cfg.Env
	cmd.Dir = cfg.Dir
	cmd.Stderr = cfg.Stderr
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	a := &Agent{cmd: cmd, stdin: stdin, timeout: cfg.Timeout}
	a.cond = sync.NewCond(&a.mu)
	a.Started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go a.read(stdout)
	return a, nil
}

// Pid is the agent's process id.
func (a *Agent) Pid() int { return a.cmd.Process.Pid }

func (a *Agent) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	// long holds a line longer than br's buffer. It is kept between lines,
	// as a client that reads many large answers keeps its buffer: a
	// repeated multi-megabyte answer is then not copied into fresh memory
	// again while it arrives (which slowed the reading, and so the agent's
	// writing, by several milliseconds per 7.5 MB).
	var long []byte
	for {
		a.mu.Lock()
		for a.paused {
			a.cond.Wait()
		}
		a.mu.Unlock()
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			continue
		}
		if len(chunk) > 0 && err == nil {
			t := time.Now()
			line := chunk
			if len(long) > 0 {
				long = append(long, chunk...)
				line = long
			}
			l := parse(line[:len(line)-1]) // keeps no reference to line
			l.T = t
			l.Size = len(line)
			a.mu.Lock()
			a.lines = append(a.lines, l)
			a.cond.Broadcast()
			a.mu.Unlock()
			long = long[:0]
		}
		if err != nil {
			a.mu.Lock()
			a.eof = true
			if err != io.EOF {
				a.readErr = err
			}
			a.cond.Broadcast()
			a.mu.Unlock()
			return
		}
	}
}

var updatePrefix = []byte(`{"type":"message_update"`)

// parse reads the envelope of a line: the members before the first large
// one ("data", "message", ...), which is all a driver needs.
func parse(b []byte) Line {
	if bytes.HasPrefix(b, updatePrefix) {
		return Line{Type: "message_update"}
	}
	var l Line
	if len(b) <= KeepRawLimit {
		l.Raw = append([]byte(nil), b...)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		l.Type = "?"
		return l
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return l
		}
		key, _ := k.(string)
		switch key {
		case "type", "id", "command", "error":
			var s string
			if dec.Decode(&s) != nil {
				return l
			}
			switch key {
			case "type":
				l.Type = s
			case "id":
				l.ID = s
			case "command":
				l.Command = s
			case "error":
				l.Error = s
			}
		case "success":
			if dec.Decode(&l.Success) != nil {
				return l
			}
		default:
			return l // data, message, ...: the envelope is complete
		}
		if l.Type != "" && l.Type != "response" {
			return l // events: the type is enough
		}
	}
	return l
}

// Pause stops reading the agent's stdout (a client that stalls): once the
// driver's buffer and the pipe are full, the agent's writes block. Lines
// already read stay readable; waits for new ones time out.
func (a *Agent) Pause() {
	a.mu.Lock()
	a.paused = true
	a.mu.Unlock()
}

// Resume reads stdout again after Pause.
func (a *Agent) Resume() {
	a.mu.Lock()
	a.paused = false
	a.cond.Broadcast()
	a.mu.Unlock()
}

// Mark is the index of the next line to arrive.
func (a *Agent) Mark() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.lines)
}

// Lines returns a copy of lines[from:to] (to < 0: up to now).
func (a *Agent) Lines(from, to int) []Line {
	a.mu.Lock()
	defer a.mu.Unlock()
	if to < 0 || to > len(a.lines) {
		to = len(a.lines)
	}
	return append([]Line(nil), a.lines[from:to]...)
}

// Send writes one command with a fresh id and returns the id and the time
// just before the write.
func (a *Agent) Send(cmd map[string]any) (string, time.Time, error) {
	a.mu.Lock()
	a.seq++
	id := "b" + strconv.Itoa(a.seq)
	a.mu.Unlock()
	c := make(map[string]any, len(cmd)+1)
	for k, v := range cmd {
		c[k] = v
	}
	c["id"] = id
	b, err := json.Marshal(c)
	if err != nil {
		return "", time.Time{}, err
	}
	b = append(b, '\n')
	t := time.Now()
	_, err = a.stdin.Write(b)
	return id, t, err
}

// Wait returns the first line at or after from that matches, and its index.
func (a *Agent) Wait(from int, what string, match func(*Line) bool) (int, Line, error) {
	return a.WaitWithin(a.timeout, from, what, match)
}

// WaitWithin is Wait with its own timeout.
func (a *Agent) WaitWithin(timeout time.Duration, from int, what string, match func(*Line) bool) (int, Line, error) {
	deadline := time.Now().Add(timeout)
	var timedOut bool
	timer := time.AfterFunc(timeout, func() {
		a.mu.Lock()
		timedOut = true
		a.cond.Broadcast()
		a.mu.Unlock()
	})
	defer timer.Stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := from; ; {
		for ; i < len(a.lines); i++ {
			if match(&a.lines[i]) {
				return i, a.lines[i], nil
			}
		}
		if a.eof {
			return 0, Line{}, fmt.Errorf("agent stdout ended while waiting for %s", what)
		}
		if timedOut || time.Now().After(deadline) {
			return 0, Line{}, fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		a.cond.Wait()
	}
}

// WaitResponse waits for the response to request id.
func (a *Agent) WaitResponse(from int, id string) (Line, error) {
	_, l, err := a.Wait(from, "the response to "+id, func(l *Line) bool { return l.Type == "response" && l.ID == id })
	return l, err
}

// WaitEvent waits for an event of type typ.
func (a *Agent) WaitEvent(from int, typ string) (int, Line, error) {
	return a.Wait(from, "event "+typ, func(l *Line) bool { return l.Type == typ })
}

// Call sends a command and waits for its response; it returns the response
// and the time from the write to its arrival.
func (a *Agent) Call(cmd map[string]any) (Line, time.Duration, error) {
	return a.CallWithin(0, cmd)
}

// CallWithin is Call with its own timeout (0 = the agent's).
func (a *Agent) CallWithin(timeout time.Duration, cmd map[string]any) (Line, time.Duration, error) {
	if timeout <= 0 {
		timeout = a.timeout
	}
	from := a.Mark()
	id, t0, err := a.Send(cmd)
	if err != nil {
		return Line{}, 0, err
	}
	_, l, err := a.WaitWithin(timeout, from, "the response to "+id, func(l *Line) bool { return l.Type == "response" && l.ID == id })
	if err != nil {
		return l, 0, err
	}
	return l, l.T.Sub(t0), nil
}

// CPU returns the CPU time the running agent has used so far, in
// nanoseconds from /proc/PID/task/*/schedstat (falling back to the
// clock-tick counts of /proc/PID/stat).
func (a *Agent) CPU() (time.Duration, error) {
	return ProcCPU(a.Pid())
}

// ProcCPU is CPU for any process.
func ProcCPU(pid int) (time.Duration, error) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	ok := false
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		sum += n
		ok = true
	}
	if ok {
		return time.Duration(sum), nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil // USER_HZ = 100
}

// Memory returns VmRSS and VmHWM (bytes) of the running agent.
func (a *Agent) Memory() (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.Pid()))
	if err != nil {
		return 0, 0, err
	}
	for _, ln := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(ln, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			hwm = n << 10
		}
	}
	return rss, hwm, nil
}

// Close closes the agent's stdin, waits for it to exit (killing its
// process group after the timeout) and returns what it used.
func (a *Agent) Close() (*Exit, error) {
	a.Resume()
	_, hwm, _ := a.Memory()
	a.stdin.Close()
	// Read stdout to its end before Wait closes the pipe.
	_, _, eofErr := a.Wait(0, "the end of stdout", func(*Line) bool { return false })
	killed := false
	if eofErr != nil && !strings.Contains(eofErr.Error(), "stdout ended") {
		killGroup(a.cmd.Process.Pid)
		killed = true
	}
	werr := a.cmd.Wait()
	// Tools may have left children in the group; they are ours to end.
	killGroup(a.cmd.Process.Pid)
	ps := a.cmd.ProcessState
	e := &Exit{Code: ps.ExitCode(), CPU: ps.UserTime() + ps.SystemTime()}
	e.MaxRSS = maxRSS(ps)
	e.HWM = hwm
	if _, ok := werr.(*exec.ExitError); ok {
		werr = nil // a non-zero exit is reported in Code
	}
	if killed && werr == nil {
		werr = fmt.Errorf("the agent did not exit within %s of its stdin closing; killed", a.timeout)
	}
	return e, werr
}

// Kill ends the agent at once (for error paths).
func (a *Agent) Kill() {
	a.Resume()
	if a.cmd.Process != nil {
		killGroup(a.cmd.Process.Pid)
	}
	a.stdin.Close()
	a.Wait(0, "the end of stdout", func(*Line) bool { return false })
	a.cmd.Wait()
}
