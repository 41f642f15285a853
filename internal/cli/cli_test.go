package cli_test

import (
	"bytes"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/pisces-agent/pisces/internal/cli"
	"github.com/pisces-agent/pisces/internal/testenv"
)

// A command-line transcript (testdata/cli/*.txtar) runs the program once in
// text or json mode (or a one-shot command such as --list-models) and
// compares what it printed:
//
//	-- args --          the command line, one argument per line; --agent-dir
//	                    $TMP/agent and --session-dir $TMP/sessions are added
//	                    unless the arguments set them
//	-- env --           NAME=VALUE lines (every *_API_KEY, *_TOKEN, PI_* and
//	                    PISCES_* variable of the test process is cleared first;
//	                    HOME is $TMP/home)
//	-- stdin --         piped stdin (without it stdin is a terminal)
//	-- script.json --   written to $TMP/script.json
//	-- files/PATH --    written to $TMP/PATH (PATH.b64: base64, decoded)
//	-- stdout --        the expected stdout, normalised as RPC transcripts are
//	-- stderr --        the expected stderr, normalised
//	-- exit --          the expected exit code
//	-- within --        optional: the run must end within this duration
//
// The program runs in $TMP. In args, env and files, $TMP is the test's
// directory and $CLOSEDPORT a local TCP port nothing listens on. -update
// rewrites stdout, stderr and exit (refused when CI is set) and compares the
// rewritten file; read the result before committing it.
func TestCommandLines(t *testing.T) {
	files, _ := filepath.Glob("testdata/cli/*.txtar")
	if len(files) == 0 {
		t.Fatal("no command-line transcripts")
	}
	for _, f := range files {
		f, _ := filepath.Abs(f)
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			runCommandLine(t, f)
		})
	}
}

var clearedEnv = regexp.MustCompile(`(_API_KEY|_TOKEN)$|^(PI|PISCES)_`)

func runCommandLine(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, f := range ar.Files {
		sections[f.Name] = string(f.Data)
	}
	dir := t.TempDir()
	closed := closedPort(t)
	subst := strings.NewReplacer("$TMP", dir, "$CLOSEDPORT", closed).Replace

	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); clearedEnv.MatchString(name) {
			t.Setenv(name, "")
		}
	}
	t.Setenv("HOME", filepath.Join(dir, "home"))
	for _, l := range strings.Split(sections["env"], "\n") {
		if name, value, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			t.Setenv(name, subst(value))
		}
	}
	for _, d := range []string{"agent", "home"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	if s, ok := sections["script.json"]; ok {
		os.WriteFile(filepath.Join(dir, "script.json"), []byte(subst(s)), 0o644)
	}
	for name, data := range sections {
		if p, ok := strings.CutPrefix(name, "files/"); ok {
			content := []byte(subst(data))
			if b64, ok := strings.CutSuffix(p, ".b64"); ok {
				p = b64
				if content, err = base64.StdEncoding.DecodeString(strings.TrimSpace(data)); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			p = filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(p), 0o755)
			mode := os.FileMode(0o644)
			if filepath.Base(p) == "auth.json" {
				mode = 0o600 // as pi writes it (another mode draws a warning)
			}
			if err := os.WriteFile(p, content, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Chdir(dir)

	var args []string
	for _, l := range strings.Split(sections["args"], "\n") {
		if l = strings.TrimSpace(l); l != "" {
			args = append(args, subst(l))
		}
	}
	if !hasFlag(args, "--agent-dir") {
		args = append([]string{"--agent-dir", filepath.Join(dir, "agent")}, args...)
	}
	if !hasFlag(args, "--session-dir") {
		args = append([]string{"--session-dir", filepath.Join(dir, "sessions")}, args...)
	}

	stdin, piped := sections["stdin"]
	var stdout, stderr bytes.Buffer
	var mu sync.Mutex
	start := time.Now()
	code := cli.Main(args, cli.IO{
		Stdin:      strings.NewReader(stdin),
		Stdout:     lockedWriter{&stdout, &mu},
		Stderr:     lockedWriter{&stderr, &mu},
		StdinIsTTY: !piped,
	})
	elapsed := time.Since(start)

	if w, ok := sections["within"]; ok {
		limit, err := time.ParseDuration(strings.TrimSpace(w))
		if err != nil {
			t.Fatalf("within: %v", err)
		}
		if elapsed > limit {
			t.Errorf("took %v, want at most %v", elapsed.Round(time.Millisecond), limit)
		}
	}
	norm := func(s string) string { return normalise(strings.ReplaceAll(s, ":"+closed, ":$CLOSEDPORT"), dir) }
	got := map[string]string{
		"stdout": norm(stdout.String()),
		"stderr": norm(stderr.String()),
		"exit":   strconv.Itoa(code) + "\n",
	}
	if testenv.Update(t, *update) {
		missing := map[string]bool{"stdout": true, "stderr": true, "exit": true}
		for i := range ar.Files {
			if g, ok := got[ar.Files[i].Name]; ok {
				ar.Files[i].Data = []byte(g)
				delete(missing, ar.Files[i].Name)
			}
		}
		for _, name := range []string{"stdout", "stderr", "exit"} {
			if missing[name] {
				ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(got[name])})
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		// Compare with what the file now holds, like any other run.
		written, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range written.Files {
			sections[f.Name] = string(f.Data)
		}
	}
	for _, name := range []string{"stdout", "stderr", "exit"} {
		if want := sections[name]; want != got[name] {
			t.Errorf("%s differs:\n%s\nfull %s:\n%s", name, lineDiff(want, got[name]), name, got[name])
		}
	}
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// closedPort returns a local TCP port that refuses connections: one the
// kernel just handed out and that was closed again.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	return port
}
