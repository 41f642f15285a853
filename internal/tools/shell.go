package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pisces-agent/pisces/internal/procgroup"
)

// resolveShell picks the shell: the configured one, else /bin/bash, else
// bash on PATH, else sh.
func resolveShell(env Env) (string, error) {
	if env.ShellPath != "" {
		if _, err := os.Stat(env.ShellPath); err == nil {
			return env.ShellPath, nil
		}
		if p, err := exec.LookPath(env.ShellPath); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("Custom shell path not found: %s", env.ShellPath)
	}
	if runtime.GOOS != "windows" {
		if st, err := os.Stat("/bin/bash"); err == nil && !st.IsDir() {
			return "/bin/bash", nil
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("sh"); err == nil {
		return p, nil
	}
	return "sh", nil
}

// shellEnv is the process environment with <AgentDir>/bin at the front of
// PATH and env.ExtraEnv appended (later entries win).
func shellEnv(env Env) []string {
	vars := os.Environ()
	if env.AgentDir != "" {
		bin := filepath.Join(env.AgentDir, "bin")
		key, idx := "PATH", -1
		for i, kv := range vars {
			k, _, _ := strings.Cut(kv, "=")
			if k == "PATH" || (runtime.GOOS == "windows" && strings.EqualFold(k, "PATH")) {
				key, idx = k, i
			}
		}
		if idx < 0 {
			vars = append(vars, key+"="+bin)
		} else {
			cur := strings.SplitN(vars[idx], "=", 2)[1]
			present := false
			for _, p := range filepath.SplitList(cur) {
				if p == bin {
					present = true
				}
			}
			if !present {
				if cur == "" {
					vars[idx] = key + "=" + bin
				} else {
					vars[idx] = key + "=" + bin + string(os.PathListSeparator) + cur
				}
			}
		}
	}
	return append(vars, env.ExtraEnv...)
}

// withPrefix prepends the configured command prefix.
func withPrefix(env Env, command string) string {
	if env.ShellCommandPrefix != "" {
		return env.ShellCommandPrefix + "\n" + command
	}
	return command
}

// shellRun is how a shell command ended.
type shellRun struct {
	exitCode int  // -1 when killed by a signal
	aborted  bool // ctx was cancelled
	timedOut bool
}

// shellSetup returns the directory a command runs in (env.Cwd, else the
// process's) and the shell that runs it, or why neither can be used.
func shellSetup(env Env) (cwd, shell string, err error) {
	cwd = env.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return "", "", fmt.Errorf("Working directory does not exist: %s\nCannot execute bash commands.", cwd)
	}
	shell, err = resolveShell(env)
	return cwd, shell, err
}

// runShell runs `shell -c command` in env.Cwd in its own process group with
// stdout and stderr merged, passing output to onData from one goroutine.
// Cancelling ctx or reaching timeout (0 = none) kills the whole group. It
// returns once the shell has exited and its output pipe is closed.
func runShell(ctx context.Context, env Env, command string, timeout time.Duration, onData func([]byte)) (shellRun, error) {
	cwd, shell, err := shellSetup(env)
	if err != nil {
		return shellRun{}, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return shellRun{}, err
	}
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = cwd
	cmd.Env = shellEnv(env)
	cmd.Stdout = pw
	cmd.Stderr = pw
	procgroup.Set(cmd)
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return shellRun{}, err
	}
	pw.Close()

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32*1024)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				onData(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var run shellRun
	var timerC <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		timerC = timer.C
	}
	ctxDone := ctx.Done()
	var graceC <-chan time.Time
	killed, exited, drained := false, false, false
	kill := func() {
		if !killed {
			killed = true
			procgroup.Kill(cmd)
		}
	}
	rd := (<-chan struct{})(readDone)
	for !exited || !drained {
		select {
		case <-ctxDone:
			ctxDone = nil
			run.aborted = true
			kill()
		case <-timerC:
			timerC = nil
			run.timedOut = true
			kill()
		case <-waitDone:
			exited = true
		case <-rd:
			rd = nil
			drained = true
		case <-graceC:
			// Something outside the group still holds the pipe.
			pr.Close()
		}
		if killed && exited && !drained && graceC == nil {
			graceC = time.After(time.Second)
		}
	}
	pr.Close()
	run.exitCode = cmd.ProcessState.ExitCode()
	return run, nil
}

// runRemote is runShell through env.Commands: `shell -c command` in
// env.Cwd with the variables bash adds to the environment (<AgentDir>/bin
// on PATH, ExtraEnv); cancelling ctx or reaching timeout (0 = none) kills
// the command. Its output reaches onData once it has ended.
func runRemote(ctx context.Context, env Env, callID, command string, timeout time.Duration, onData func([]byte)) (shellRun, error) {
	cwd, shell, err := shellSetup(env)
	if err != nil {
		return shellRun{}, err
	}
	own := map[string]bool{}
	for _, kv := range os.Environ() {
		own[kv] = true
	}
	var extra []string
	for _, kv := range shellEnv(env) {
		if !own[kv] {
			extra = append(extra, kv)
		}
	}
	rctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out, code, err := env.Commands.RunCommand(rctx, callID, RemoteCommand{Shell: shell, Args: []string{"-c", command}, Cwd: cwd, Env: extra})
	var run shellRun
	switch {
	case ctx.Err() != nil:
		run.aborted = true
	case rctx.Err() != nil:
		run.timedOut = true
	case err != nil:
		return shellRun{}, err
	}
	if out != "" {
		onData([]byte(out))
	}
	run.exitCode = code
	return run, nil
}

// outputSink keeps the tail of a command's output, counts its lines and
// spills it to a temp file (see spillFile) once it grows past
// DEFAULT_MAX_BYTES.
type outputSink struct {
	mu       sync.Mutex
	buf      []byte // the last 2*DEFAULT_MAX_BYTES bytes
	total    int
	newlines int
	lastLine int // bytes since the last newline
	spills   *SpillFiles
	file     *spillFile
	fileErr  error
	closed   bool
	dirty    bool
}

func (s *outputSink) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	s.total += len(p)
	for _, c := range p {
		if c == '\n' {
			s.newlines++
		}
	}
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		s.lastLine = len(p) - i - 1
	} else {
		s.lastLine += len(p)
	}
	if s.total > DEFAULT_MAX_BYTES && s.file == nil && s.fileErr == nil {
		s.spillLocked()
	} else if s.file != nil && !s.closed {
		s.file.write(p)
	}
	if keep := 2 * DEFAULT_MAX_BYTES; len(s.buf) > keep {
		s.buf = append(s.buf[:0:0], s.buf[len(s.buf)-keep:]...)
	}
	s.dirty = true
}

// spillLocked starts the temp file with everything buffered so far.
func (s *outputSink) spillLocked() {
	s.file, s.fileErr = newSpillFile(s.spills)
	if s.file != nil {
		s.file.write(s.buf)
	}
}

// finish closes the temp file; when the output was truncated by lines alone
// it is spilled now so the notice can always name a file.
func (s *outputSink) finish(truncated bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if truncated && s.file == nil && s.fileErr == nil && s.total <= len(s.buf) {
		s.spillLocked()
	}
	if s.file != nil && !s.closed {
		s.closed = true
		s.file.close()
	}
}

// path is the spill file's path ("" when there is none).
func (s *outputSink) pathLocked() string {
	if s.file == nil {
		return ""
	}
	return s.file.path
}

// tail returns the tail-truncated output with totals over the whole output,
// and the temp file path (if any).
func (s *outputSink) tail() (Truncation, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirty = false
	b := s.buf
	if s.total > len(b) { // the buffer starts mid-stream: skip a split character
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	tr := TruncateTail(strings.ToValidUTF8(string(b), "\uFFFD"), 0, 0)
	if s.total > len(s.buf) {
		tr.Truncated = true
		if tr.TruncatedBy == "" {
			tr.TruncatedBy = "bytes"
		}
	}
	tr.TotalLines = s.newlines + 1
	tr.TotalBytes = s.total
	return tr, s.pathLocked()
}

func (s *outputSink) isDirty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dirty
}

// truncationNotice is pi's notice for tail-truncated command output, with
// what the spill file dropped (if anything) after its path.
func (s *outputSink) truncationNotice(tr Truncation, path string) string {
	s.mu.Lock()
	if s.file != nil {
		path += s.file.note()
	}
	s.mu.Unlock()
	start := tr.TotalLines - tr.OutputLines + 1
	end := tr.TotalLines
	switch {
	case tr.LastLinePartial:
		s.mu.Lock()
		lineSize := s.lastLine
		s.mu.Unlock()
		return fmt.Sprintf("[Showing last %s of line %d (line is %s). Full output: %s]",
			FormatSize(tr.OutputBytes), end, FormatSize(lineSize), path)
	case tr.TruncatedBy == "lines":
		return fmt.Sprintf("[Showing lines %d-%d of %d. Full output: %s]", start, end, tr.TotalLines, path)
	default:
		return fmt.Sprintf("[Showing lines %d-%d of %d (%s limit). Full output: %s]",
			start, end, tr.TotalLines, FormatSize(DEFAULT_MAX_BYTES), path)
	}
}
