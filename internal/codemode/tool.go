package codemode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/procgroup"
	"github.com/pisces-agent/pisces/internal/tools"
)

// Function is a tool the program can call.
type Function struct {
	Tool   tools.Tool
	Server string // the MCP server's name ("" for other tools)
	Name   string // the server's own tool name
}

// Tool is the codemode tool over the functions list returns at each
// run.
type Tool struct {
	list func() []Function
	// Exe is the binary started as the child (default: this one).
	Exe string
	// TimeoutOverride, when set, replaces Timeout (tests).
	TimeoutOverride time.Duration
}

// New returns the codemode tool.
func New(list func() []Function) *Tool { return &Tool{list: list} }

func (*Tool) Name() string { return Name }

func (t *Tool) Description() string {
	var b strings.Builder
	b.WriteString("Run a JavaScript program (the body of an async function) in a sandbox where tools are async functions. ")
	b.WriteString("Call a tool as `await tools.NAME(args)` or `await mcp.SERVER[\"tool-name\"](args)`; a call resolves to the tool's structured result when it gives one, else its text, and throws when the tool fails. Calls you do not await one by one (Promise.all) run at the same time. ")
	b.WriteString("Return the value you want back; console.log output is returned too. There is no file system, network or process access except through the tools. ")
	fmt.Fprintf(&b, "Limits: %v wall time, %d MB of memory, %d KB of logs and result.", Timeout, HeapLimit>>20, OutputLimit>>10)
	fns := t.list()
	if len(fns) > 0 {
		b.WriteString("\n\nAvailable tools:")
		for _, f := range fns {
			desc, _, _ := strings.Cut(f.Tool.Description(), "\n")
			fmt.Fprintf(&b, "\n- tools.%s(%s): %s", f.Tool.Name(), compactSchema(f.Tool.Parameters()), desc)
		}
	}
	return b.String()
}

// compactSchema is the argument object's property names (for the
// description; the full schema is the server's).
func compactSchema(schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return ""
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	return "{" + strings.Join(names, ", ") + "}"
}

func (*Tool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"JavaScript: the body of an async function; use await for tool calls and return the result"}},"required":["code"]}`)
}

type nestedCall struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Execute runs the program in a child process and answers its calls.
func (t *Tool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil || strings.TrimSpace(a.Code) == "" {
		return tools.ErrorResult("codemode needs code (a JavaScript program)"), nil
	}
	timeout := Timeout
	if t.TimeoutOverride > 0 {
		timeout = t.TimeoutOverride
	}
	fns := t.list()
	byName := map[string]Function{}
	req := request{Code: a.Code, TimeoutMs: timeout.Milliseconds(), Functions: []function{}}
	for _, f := range fns {
		byName[f.Tool.Name()] = f
		req.Functions = append(req.Functions, function{Name: f.Tool.Name(), Server: f.Server, Tool: f.Name})
	}
	exe := t.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return tools.ErrorResult("codemode cannot start its interpreter: " + err.Error()), nil
		}
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	procgroup.Set(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return tools.Result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return tools.Result{}, err
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	if err := cmd.Start(); err != nil {
		return tools.ErrorResult("codemode cannot start its interpreter: " + err.Error()), nil
	}
	// The child ends with the run's context or its own wall-time limit
	// (plus a grace for it to report); its whole group is killed then.
	rctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	stop := context.AfterFunc(rctx, func() { procgroup.Kill(cmd) })
	defer stop()
	defer procgroup.Kill(cmd) // whatever the program's group left

	enc := json.NewEncoder(stdin)
	if err := enc.Encode(req); err != nil {
		procgroup.Kill(cmd)
		_ = cmd.Wait()
		return tools.ErrorResult("codemode: the interpreter did not start: " + err.Error()), nil
	}
	// Each call runs in its own goroutine as it comes, so that calls the
	// program does not await one by one (Promise.all) run at the same
	// time; replies go back as the calls end. nested lists them in the
	// order they were made.
	var (
		mu     sync.Mutex // nested
		nested []nestedCall
		calls  sync.WaitGroup
		wmu    sync.Mutex // the child's stdin
	)
	callCtx, cancelCalls := context.WithCancel(rctx)
	defer cancelCalls()
	r := bufio.NewReaderSize(stdout, 64<<10)
	var done *message
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		var m message
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Type == "done" {
			done = &m
			break
		}
		if m.Type != "call" {
			continue
		}
		id := fmt.Sprintf("%s:%d", call.ID, m.ID)
		mu.Lock()
		i := len(nested)
		nested = append(nested, nestedCall{ID: id, Name: m.Name})
		mu.Unlock()
		calls.Add(1)
		go func() {
			defer calls.Done()
			res := t.callTool(callCtx, call, id, m.Name, m.Args, byName)
			status := "ok"
			if res.IsError {
				status = "error"
			}
			mu.Lock()
			nested[i].Status = status
			mu.Unlock()
			// The reading above never waits for this write (a child
			// busy in its program reads replies later). A reply the
			// child no longer reads (it ended) is dropped.
			wmu.Lock()
			defer wmu.Unlock()
			_ = enc.Encode(reply{ID: m.ID, Text: ai.JoinText(res.Content, "\n"), Structured: res.StructuredContent, IsError: res.IsError})
		}()
	}
	// Calls the program left running when it ended (it did not await
	// them) are cancelled, and a reply still being written is given up
	// (closing stdin ends the write); every nested call has ended before
	// the codemode call does.
	cancelCalls()
	_ = stdin.Close()
	calls.Wait()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(2 * time.Second): // it reported (or broke) and does not end
		procgroup.Kill(cmd)
		werr = <-waited
	}

	out := tools.Result{}
	if len(nested) > 0 {
		out.NestedCalls = jsonx.MustMarshal(struct {
			Calls    []nestedCall `json:"calls"`
			Complete bool         `json:"complete"`
		}{nested, done != nil})
	}
	switch {
	case done == nil && ctx.Err() != nil:
		out.Content = []ai.Content{ai.Text("Tool execution aborted")}
		out.IsError = true
		return out, nil
	case done == nil && rctx.Err() != nil:
		out.Content = []ai.Content{ai.Text(fmt.Sprintf("codemode: the program ran longer than %v and was stopped", timeout))}
		out.IsError = true
		return out, nil
	case done == nil:
		msg := "codemode: the interpreter stopped"
		if s := stderr.String(); strings.Contains(s, "out of memory") || strings.Contains(s, "cannot allocate memory") {
			msg = fmt.Sprintf("codemode: the program ran out of memory (limit %d MB)", HeapLimit>>20)
		} else if werr != nil {
			msg += ": " + werr.Error()
		}
		out.Content = []ai.Content{ai.Text(msg)}
		out.IsError = true
		return out, nil
	}
	var b strings.Builder
	if done.Error != "" {
		fmt.Fprintf(&b, "Error: %s", done.Error)
		out.IsError = true
	} else if len(done.Result) > 0 {
		b.Write(done.Result)
	} else {
		b.WriteString("undefined")
	}
	if len(done.Logs) > 0 {
		b.WriteString("\n\nLogs:\n")
		b.WriteString(strings.Join(done.Logs, "\n"))
	}
	text := b.String()
	if len(text) > OutputLimit || done.Truncated {
		text = validPrefix(text, OutputLimit) + fmt.Sprintf("\n[output cut at %d KB]", OutputLimit>>10)
	}
	out.Content = []ai.Content{ai.Text(text)}
	return out, nil
}

// callTool runs one of the program's calls as a nested tool call.
func (t *Tool) callTool(ctx context.Context, call tools.Call, id, name string, args json.RawMessage, byName map[string]Function) tools.Result {
	run := func(ctx context.Context) tools.Result {
		f, ok := byName[name]
		if !ok {
			return tools.ErrorResult(fmt.Sprintf("Tool %s not found", name))
		}
		res, err := f.Tool.Execute(ctx, tools.Call{ID: id, Args: args})
		if err != nil {
			return tools.ErrorResult(err.Error())
		}
		return res
	}
	if call.RunNested != nil {
		return call.RunNested(ctx, id, name, args, run)
	}
	return run(ctx)
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// validPrefix is s cut to at most n bytes, at a character boundary.
func validPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
