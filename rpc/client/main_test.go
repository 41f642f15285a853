package client_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/rpc/client"
)

// piscesBin is the pisces binary built by TestMain.
var piscesBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pisces-client-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	piscesBin = filepath.Join(dir, "pisces")
	build := exec.Command("go", "build", "-o", piscesBin, "github.com/pisces-agent/pisces/cmd/pisces")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building pisces:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start runs pisces with the scripted provider playing script (JSON) and
// returns the client; it is closed when the test ends. sessions selects
// persisted sessions in a temporary directory instead of --no-session.
func start(t *testing.T, script string, sessions bool, extra ...string) *client.Client {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--provider", "scripted", "--script", path, "--agent-dir", filepath.Join(dir, "agent")}
	if sessions {
		args = append(args, "--session-dir", filepath.Join(dir, "sessions"))
	} else {
		args = append(args, "--no-session")
	}
	args = append(args, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.StartWith(ctx, []client.Option{
		client.WithTimeout(20 * time.Second),
		client.WithGracePeriod(2 * time.Second),
		client.WithDir(dir),
	}, piscesBin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v; stderr:\n%s", err, c.Stderr())
		}
	})
	return c
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
