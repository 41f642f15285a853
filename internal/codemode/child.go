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
// limits are set before anything else.
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
	enc := json.NewEncoder(out)
	done := run(req, func(m message) (reply, error) {
		if err := enc.Encode(m); err != nil {
			return reply{}, err
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			return reply{}, err
		}
		var rep reply
		if err := json.Unmarshal(line, &rep); err != nil {
			return reply{}, err
		}
		return rep, nil
	})
	done.Type = "done"
	if err := enc.Encode(done); err != nil {
		return 1
	}
	return 0
}

// run executes the program with call asking the parent for each tool
// call, and returns the done message.
func run(req request, call func(message) (reply, error)) message {
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
			rep, err := call(message{Type: "call", ID: nextID, Name: f.Name, Args: args})
			if err != nil {
				callErr = fmt.Errorf("the tool connection is gone: %v", err)
				rt.Interrupt(callErr)
				_ = reject(rt.NewGoError(callErr))
				return rt.ToValue(p)
			}
			if rep.IsError {
				_ = reject(rt.NewGoError(errors.New(rep.Text)))
				return rt.ToValue(p)
			}
			if len(rep.Structured) > 0 {
				var v any
				if json.Unmarshal(rep.Structured, &v) == nil {
					_ = resolve(v)
					return rt.ToValue(p)
				}
			}
			_ = resolve(rep.Text)
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
	timer := time.AfterFunc(timeout, func() { rt.Interrupt(fmt.Sprintf("the program ran longer than %v", timeout)) })
	defer timer.Stop()

	out := message{}
	v, err := rt.RunString("(async () => {\n" + req.Code + "\n})()")
	if err == nil {
		p, ok := v.Export().(*goja.Promise)
		switch {
		case !ok:
			err = errors.New("the program did not run as an async function")
		case p.State() == goja.PromiseStateRejected:
			err = errors.New(display(rt, p.Result()))
		case p.State() == goja.PromiseStatePending:
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
