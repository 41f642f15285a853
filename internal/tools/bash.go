package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

//go:embed bash.md
var bashDescription string

// updateInterval throttles bash's streamed updates.
const updateInterval = 100 * time.Millisecond

type bashTool struct{ env Env }

func (t *bashTool) Name() string        { return "bash" }
func (t *bashTool) Description() string { return strings.TrimSpace(bashDescription) }
func (t *bashTool) Parameters() json.RawMessage {
	return objectSchema(
		prop{"command", typed("string", "The command to run"), true},
		prop{"timeout", typed("number", "Timeout in seconds (optional; no timeout by default)"), false},
	)
}

type bashDetails struct {
	Truncation     *Truncation `json:"truncation,omitempty"`
	FullOutputPath string      `json:"fullOutputPath,omitempty"`
}

func (t *bashTool) Execute(ctx context.Context, call Call) (Result, error) {
	a, err := parseArgs("bash", call.Args)
	if err != nil {
		return errResult(err), nil
	}
	command, _, err := a.str("command", true)
	if err != nil {
		return errResult(err), nil
	}
	timeout, hasTimeout, err := a.num("timeout")
	if err != nil {
		return errResult(err), nil
	}
	if hasTimeout && (timeout <= 0 || timeout*1000 > math.MaxInt32) {
		return ErrorResult(`Invalid arguments for bash: "timeout" must be a positive number of seconds no greater than 2147483.647`), nil
	}
	if ctx.Err() != nil {
		return ErrorResult("Command aborted"), nil
	}

	sink := &outputSink{spills: t.env.Spills}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	onData := sink.write
	// A command run by a CommandRunner is shown by the runner (an
	// editor's terminal); its output comes at the end.
	if call.OnUpdate != nil && t.env.Commands == nil {
		// The first output goes out at once, from the goroutine that
		// reads it, so a command that prints once gets exactly one
		// update, before its result, however busy the machine; later
		// output is sent at most every updateInterval.
		var emitMu sync.Mutex
		emit := func() {
			emitMu.Lock()
			defer emitMu.Unlock()
			if !sink.isDirty() {
				return
			}
			tr, path := sink.tail()
			p := Result{Content: []ai.Content{ai.Text(tr.Content)}}
			d := bashDetails{FullOutputPath: path}
			if tr.Truncated {
				d.Truncation = &tr
			}
			p.Details = details(d)
			call.OnUpdate(p)
		}
		first := true
		onData = func(p []byte) {
			sink.write(p)
			if first {
				first = false
				emit()
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(updateInterval)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					emit()
				}
			}
		}()
	}
	var dur time.Duration
	if hasTimeout {
		dur = time.Duration(timeout * float64(time.Second))
	}
	var run shellRun
	var runErr error
	if t.env.Commands != nil {
		run, runErr = runRemote(ctx, t.env, call.ID, withPrefix(t.env, command), dur, onData)
	} else {
		run, runErr = runShell(ctx, t.env, withPrefix(t.env, command), dur, onData)
	}
	close(stop)
	wg.Wait()
	if runErr != nil {
		sink.finish(false)
		return ErrorResult(runErr.Error()), nil
	}

	tr, _ := sink.tail()
	sink.finish(tr.Truncated)
	_, path := sink.tail()
	text := tr.Content
	var det *bashDetails
	if tr.Truncated {
		det = &bashDetails{Truncation: &tr, FullOutputPath: path}
		text += "\n\n" + sink.truncationNotice(tr, path)
	}
	res := Result{}
	if det != nil {
		res.Details = details(det)
	}
	switch {
	case run.aborted || run.timedOut:
		msg := "Command aborted"
		if !run.aborted {
			msg = "Command timed out after " + strconv.FormatFloat(timeout, 'f', -1, 64) + " seconds"
		}
		if text != "" {
			text += "\n\n"
		}
		text += msg
		res.IsError = true
	default:
		if tr.Content == "" {
			text = "(no output)" + strings.TrimPrefix(text, tr.Content)
		}
		if run.exitCode > 0 {
			text += "\n\nCommand exited with code " + strconv.Itoa(run.exitCode)
			res.IsError = true
		}
	}
	res.Content = []ai.Content{ai.Text(text)}
	return res, nil
}
