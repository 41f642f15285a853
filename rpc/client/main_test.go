package client_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/testenv"
	"github.com/pisces-agent/pisces/rpc/client"
)

// piscesBin is the pisces binary built by TestMain.
var piscesBin string

func TestMain(m *testing.M) {
	var err error
	if piscesBin, err = testenv.PiscesBinary(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testenv.Cleanup()
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.StartWith(ctx, []client.Option{
		client.WithTimeout(time.Minute),
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
