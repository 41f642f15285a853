package codemode

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// ChildMain runs one program: it reads the request from in, asks for tool
// calls and reports the end on out, and returns the exit code. Memory
// limits are set before anything else. Replies to the program's calls are
// read as they come, in any order: calls the program makes without
// awaiting each (Promise.all) run at the same time in the parent.
func ChildMain(in io.Reader, out io.Writer) int {
	limitMemory(MemoryLimit * raceScale)
	debug.SetMemoryLimit(HeapLimit * raceScale)
	r := bufio.NewReaderSize(in, 64<<10)
	line, err := r.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return 2
	}
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return 2
	}
	replies := make(chan reply)
	go func() {
		defer close(replies)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var rep reply
			if json.Unmarshal(line, &rep) == nil {
				replies <- rep
			}
		}
	}()
	enc := json.NewEncoder(out)
	done := run(req, enc.Encode, replies)
	done.Type = "done"
	if err := enc.Encode(done); err != nil {
		return 1
	}
	return 0
}

// run executes the program: send asks the parent for a tool call, and
// replies brings the answers (closed when the parent is gone). It returns
// the done message.
func run(req request, send func(any) error, replies <-chan reply) message {
	rt := goja.New()
	rt.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	rt.SetMaxCallStackSize(2000)
	var logs []string
	size := 0
	truncated := false
	logf := func(prefix string) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			parts := make([]string, len(c.Arguments))
			for i, a := range c.Arguments {
				parts[i] = display(rt, a)
			}
			s := prefix + strings.Join(parts, " ")
			if size+len(s) > OutputLimit {
				truncated = true
				return goja.Undefined()
			}
			size += len(s)
			logs = append(logs, s)
			return goja.Undefined()
		}
	}
	console := rt.NewObject()
	_ = console.Set("log", logf(""))
	_ = console.Set("info", logf(""))
	_ = console.Set("debug", logf(""))
	_ = console.Set("warn", logf("warn: "))
	_ = console.Set("error", logf("error: "))
	_ = rt.Set("console", console)

	// The calls asked for and not answered yet, by id.
	type settle struct{ resolve, reject func(any) error }
	pending := map[int]settle{}
	nextID := 0
	var callErr error
	makeFn := func(f function) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			p, resolve, reject := rt.NewPromise()
			args := json.RawMessage(`{}`)
			if a := c.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
				b, err := json.Marshal(a.Export())
				if err != nil {
					_ = reject(rt.NewTypeError("arguments of %s: %v", f.Name, err))
					return rt.ToValue(p)
				}
				args = b
			}
			if callErr != nil {
				_ = reject(rt.NewGoError(callErr))
				return rt.ToValue(p)
			}
			nextID++
			if err := send(message{Type: "call", ID: nextID, Name: f.Name, Args: args}); err != nil {
				callErr = fmt.Errorf("the tool connection is gone: %v", err)
				rt.Interrupt(callErr)
				_ = reject(rt.NewGoError(callErr))
				return rt.ToValue(p)
			}
			pending[nextID] = settle{resolve, reject}
			return rt.ToValue(p)
		}
	}
	toolsObj := rt.NewObject()
	mcpObj := rt.NewObject()
	for _, f := range req.Functions {
		fn := rt.ToValue(makeFn(f))
		_ = toolsObj.Set(f.Name, fn)
		if f.Server != "" {
			srv := mcpObj.Get(f.Server)
			if srv == nil || goja.IsUndefined(srv) {
				o := rt.NewObject()
				_ = mcpObj.Set(f.Server, o)
				srv = o
			}
			_ = srv.ToObject(rt).Set(f.Tool, fn)
		}
	}
	_ = rt.Set("tools", toolsObj)
	_ = rt.Set("mcp", mcpObj)

	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = Timeout
	}
	expired := make(chan struct{})
	timeoutMsg := fmt.Sprintf("the program ran longer than %v", timeout)
	timer := time.AfterFunc(timeout, func() {
		close(expired)
		rt.Interrupt(timeoutMsg)
	})
	defer timer.Stop()

	out := message{}
	v, err := rt.RunString("(async () => {\n" + req.Code + "\n})()")
	var p *goja.Promise
	if err == nil {
		var ok bool
		if p, ok = v.Export().(*goja.Promise); !ok {
			err = errors.New("the program did not run as an async function")
		}
	}
	// The event loop: answers settle their calls' promises (the program
	// goes on in the settling call) until the program's promise settles.
	for err == nil && p.State() == goja.PromiseStatePending && len(pending) > 0 {
		select {
		case rep, ok := <-replies:
			if !ok {
				err = errors.New("the tool connection is gone")
				break
			}
			s, ok := pending[rep.ID]
			if !ok {
				continue
			}
			delete(pending, rep.ID)
			err = answer(rt, s.resolve, s.reject, rep)
		case <-expired:
			err = errors.New(timeoutMsg)
		}
	}
	if err == nil {
		switch p.State() {
		case goja.PromiseStateRejected:
			err = errors.New(display(rt, p.Result()))
		case goja.PromiseStatePending:
			err = errors.New("the program's promise never settled (an await on something that does not resolve)")
		default:
			if res := p.Result(); res != nil && !goja.IsUndefined(res) {
				if b, jerr := json.Marshal(res.Export()); jerr == nil {
					out.Result = b
				} else {
					out.Result, _ = json.Marshal(display(rt, res))
				}
			}
		}
	}
	if err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			out.Error = fmt.Sprint(ie.Value())
		} else {
			out.Error = err.Error()
		}
	}
	out.Logs, out.Truncated = logs, truncated
	return out
}

// answer settles a call's promise with its reply: a tool error rejects
// it, a structured result resolves it to that value, else to the text.
// The program runs on inside; the error is one it cannot catch (an
// interrupt).
func answer(rt *goja.Runtime, resolve, reject func(any) error, rep reply) error {
	if rep.IsError {
		return reject(rt.NewGoError(errors.New(rep.Text)))
	}
	if len(rep.Structured) > 0 {
		var v any
		if json.Unmarshal(rep.Structured, &v) == nil {
			return resolve(v)
		}
	}
	return resolve(rep.Text)
}

// display renders a value as console.log would: strings as they are,
// errors with their message, everything else as JSON when it can be.
func display(rt *goja.Runtime, v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if s, ok := v.Export().(string); ok {
		return s
	}
	if o, ok := v.(*goja.Object); ok {
		if msg := o.Get("message"); msg != nil && o.Get("stack") != nil {
			return o.Get("name").String() + ": " + msg.String()
		}
	}
	if b, err := json.Marshal(v.Export()); err == nil {
		return string(b)
	}
	return v.String()
}
