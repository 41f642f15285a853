package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

func run(t *testing.T, env Env, name string, args any) Result {
	t.Helper()
	return runCtx(t, context.Background(), env, name, args, nil)
}

func runCtx(t *testing.T, ctx context.Context, env Env, name string, args any, onUpdate func(Result)) Result {
	t.Helper()
	tool, ok := ByName(env, name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	res, err := tool.Execute(ctx, Call{ID: "c1", Args: raw, OnUpdate: onUpdate})
	if err != nil {
		t.Fatalf("%s: Execute error: %v", name, err)
	}
	return res
}

func text(r Result) string { return ai.JoinText(r.Content, "\n") }

func mustText(t *testing.T, r Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", text(r))
	}
	return text(r)
}

func wantError(t *testing.T, r Result, want string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want error %q, got success %q", want, text(r))
	}
	if got := text(r); got != want {
		t.Fatalf("error text\n got: %q\nwant: %q", got, want)
	}
}

func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeDetails(t *testing.T, r Result) map[string]any {
	t.Helper()
	if r.Details == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(r.Details, &m); err != nil {
		t.Fatalf("details %s: %v", r.Details, err)
	}
	return m
}
