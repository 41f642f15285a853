package cli_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/cli"
	"github.com/pisces-agent/pisces/internal/fsx"
)

// plantedRepo is a repository holding an agent dir of its own at
// .pisces/agent, with an extension that leaves a marker when it runs; it
// returns the repository and the marker's path.
func plantedRepo(t *testing.T) (repo, marker string) {
	t.Helper()
	dir := t.TempDir()
	repo = filepath.Join(dir, "repo")
	marker = filepath.Join(dir, "extension-ran")
	ext := filepath.Join(repo, ".pisces", "agent", "extensions", "x")
	if err := os.MkdirAll(filepath.Dir(ext), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ext, []byte("#!/bin/sh\ntouch '"+marker+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return repo, marker
}

func writeScript(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(`{"turns":[{"content":[{"type":"text","text":"hello"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Without HOME and without an account home directory, Pisces refuses to
// start instead of taking .pisces/agent under the working directory as its
// agent dir (where a repository would configure it and run its code).
func TestNoHomeRefusesToStart(t *testing.T) {
	repo, marker := plantedRepo(t)
	script := writeScript(t)
	defer fsx.OverrideAccountHome(func() (string, error) { return "", errors.New("unknown user") })()
	t.Setenv("HOME", "")
	t.Setenv("PISCES_CODING_AGENT_DIR", "")
	t.Chdir(repo)
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"-p", "--no-session", "--provider", "scripted", "--script", script, "hi"},
		cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, StdinIsTTY: true})
	if code != 1 {
		t.Errorf("exit %d, want 1; stdout %q", code, stdout.String())
	}
	want := "pisces: cannot find your home directory (HOME is unset); set HOME or PISCES_CODING_AGENT_DIR to an absolute path\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's extension ran")
	}
}

// Without HOME, the home directory of the OS account is used.
func TestNoHomeUsesAccountHome(t *testing.T) {
	repo, marker := plantedRepo(t)
	script := writeScript(t)
	home := t.TempDir()
	defer fsx.OverrideAccountHome(func() (string, error) { return home, nil })()
	t.Setenv("HOME", "")
	t.Setenv("PISCES_CODING_AGENT_DIR", "")
	t.Chdir(repo)
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"-p", "--provider", "scripted", "--script", script, "hi"},
		cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, StdinIsTTY: true})
	if code != 0 || stdout.String() != "hello\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's extension ran")
	}
	// The session went to the account home's agent dir.
	if m, _ := filepath.Glob(filepath.Join(home, ".pisces", "agent", "sessions", "*", "*.jsonl")); len(m) != 1 {
		t.Errorf("sessions in the account home: %v", m)
	}
}

// An agent dir given explicitly may be relative: it resolves against the
// working directory (the user's choice); a ~/ needs a home directory.
func TestExplicitAgentDir(t *testing.T) {
	script := writeScript(t)
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("PISCES_CODING_AGENT_DIR", "")
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"-p", "--agent-dir", "cfg", "--provider", "scripted", "--script", script, "hi"},
		cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, StdinIsTTY: true})
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "cfg", "sessions", "*", "*.jsonl")); len(m) != 1 {
		t.Errorf("sessions under ./cfg: %v", m)
	}

	defer fsx.OverrideAccountHome(func() (string, error) { return "", errors.New("unknown user") })()
	t.Setenv("HOME", "")
	t.Setenv("PISCES_CODING_AGENT_DIR", "~/cfg")
	stderr.Reset()
	code = cli.Main([]string{"-p", "--provider", "scripted", "--script", script, "hi"},
		cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, StdinIsTTY: true})
	want := "pisces: PISCES_CODING_AGENT_DIR: cannot expand \"~/cfg\": cannot find your home directory (HOME is unset)\n"
	if code != 1 || stderr.String() != want {
		t.Errorf("exit %d, stderr %q, want %q", code, stderr.String(), want)
	}
}
