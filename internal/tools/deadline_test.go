package tools

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// toolDeadline is how long a tool may take before a test calls it hung: far
// above what any of these calls needs (they answer in milliseconds), so a
// loaded CI machine running -race does not fail them.
const toolDeadline = 10 * time.Second

// within runs a tool and fails the test when it has not returned within
// toolDeadline. It returns the result and how long the call took.
func within(t *testing.T, ctx context.Context, env Env, name string, args any) (Result, time.Duration) {
	t.Helper()
	return withinFor(t, toolDeadline, ctx, env, name, args)
}

// heavyDeadline is for calls that do real work on large files: under -race
// on a loaded machine they take seconds.
const heavyDeadline = 2 * time.Minute

// withinFor is within with another deadline.
func withinFor(t *testing.T, deadline time.Duration, ctx context.Context, env Env, name string, args any) (Result, time.Duration) {
	t.Helper()
	type out struct {
		r Result
		d time.Duration
	}
	done := make(chan out, 1)
	start := time.Now()
	go func() {
		// runCtx may call t.Fatal, which must not happen on this goroutine.
		tool, _ := ByName(env, name)
		raw, _ := jsonArgs(args)
		r, err := tool.Execute(ctx, Call{ID: "c1", Args: raw})
		if err != nil {
			r = ErrorResult("Execute error: " + err.Error())
		}
		done <- out{r, time.Since(start)}
	}()
	select {
	case o := <-done:
		return o.r, o.d
	case <-time.After(deadline):
		t.Fatalf("%s %v has not returned after %v", name, args, deadline)
		return Result{}, 0
	}
}

// jsonArgs encodes a tool's arguments (a string is taken as JSON already).
func jsonArgs(args any) (json.RawMessage, error) {
	if s, ok := args.(string); ok {
		return json.RawMessage(s), nil
	}
	return json.Marshal(args)
}
