package acp_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/pisces-agent/pisces/internal/cli"
	"github.com/pisces-agent/pisces/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the out sections of testdata/transcripts/*.txtar")

// A transcript (testdata/transcripts/*.txtar) drives pisces --mode acp in
// process with raw JSON-RPC lines and compares all of stdout:
//
//	-- script.json --  the scripted provider's script
//	-- files/... --    files under the test's directory (the project is proj/)
//	-- in --           lines sent on stdin; $PROJ is the project directory,
//	                   $SESSION the sessionId of the first session/new. A
//	                   line with an "id" waits for its response. Directives:
//	                     #nowait               the next line does not wait
//	                     #response ID          wait for the response ID
//	                     #wait TEXT            wait for an output line holding TEXT
//	                     #answer METHOD JSON   wait for the agent's next request
//	                                           METHOD and answer it with result JSON
//	-- out --          stdout, with the session id as $SESSION, the test's
//	                   directory as $TMP
//
// go test ./internal/transport/acp -run TestTranscripts -update rewrites
// the out sections.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) { runTranscript(t, f) })
	}
}

type transcriptOut struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
	ended   bool
}

func (o *transcriptOut) add(l string) {
	o.mu.Lock()
	o.lines = append(o.lines, l)
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
}

func (o *transcriptOut) end() {
	o.mu.Lock()
	o.ended = true
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
}

// await waits for a line after from for which match holds; it returns its
// index.
func (o *transcriptOut) await(t *testing.T, what string, from int, match func(string) bool) int {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		o.mu.Lock()
		for i := from; i < len(o.lines); i++ {
			if match(o.lines[i]) {
				o.mu.Unlock()
				return i
			}
		}
		ch, ended, got := o.changed, o.ended, strings.Join(o.lines, "\n")
		o.mu.Unlock()
		if ended {
			t.Fatalf("stdout ended before %s:\n%s", what, got)
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s:\n%s", what, got)
		}
	}
}

var reSessionID = regexp.MustCompile(`"sessionId":"([0-9a-f-]{36})"`)

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, f := range ar.Files {
		sections[f.Name] = string(f.Data)
	}
	dir := t.TempDir()
	agentDir, proj, script := setupDirs(t, dir, sections["script.json"])
	for name, data := range sections {
		if rel, ok := strings.CutPrefix(name, "files/"); ok {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := cli.Main(acpArgs(agentDir, script), cli.IO{Stdin: inR, Stdout: outW, Stderr: io.Discard})
		outW.Close()
		done <- code
	}()
	out := &transcriptOut{changed: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			out.add(sc.Text())
		}
		out.end()
	}()
	session := ""
	sessionOf := func() {
		if session != "" {
			return
		}
		out.mu.Lock()
		defer out.mu.Unlock()
		for _, l := range out.lines {
			if m := reSessionID.FindStringSubmatch(l); m != nil {
				session = m[1]
				return
			}
		}
	}
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	responseTo := func(id string) func(string) bool {
		return func(l string) bool {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			return json.Unmarshal([]byte(l), &m) == nil && m.Method == "" && string(m.ID) == id
		}
	}
	nowait := false
	answered := 0 // the agent's requests before this line are answered
	for _, line := range strings.Split(strings.TrimSpace(sections["in"]), "\n") {
		sessionOf()
		line = strings.NewReplacer("$PROJ", proj, "$SESSION", session).Replace(line)
		switch {
		case line == "":
		case line == "#nowait":
			nowait = true
		case strings.HasPrefix(line, "#response "):
			id := strings.TrimPrefix(line, "#response ")
			out.await(t, "response "+id, 0, responseTo(id))
		case strings.HasPrefix(line, "#wait "):
			text := strings.TrimPrefix(line, "#wait ")
			out.await(t, text, 0, func(l string) bool { return strings.Contains(l, text) })
		case strings.HasPrefix(line, "#answer "):
			method, result, _ := strings.Cut(strings.TrimPrefix(line, "#answer "), " ")
			i := out.await(t, "the request "+method, answered, func(l string) bool { return strings.Contains(l, `"method":"`+method+`"`) })
			answered = i + 1
			out.mu.Lock()
			req := out.lines[i]
			out.mu.Unlock()
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(req), &m); err != nil || m.ID == nil {
				t.Fatalf("%s is not a request: %s", method, req)
			}
			send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)
		case strings.HasPrefix(line, "#"):
			t.Fatalf("unknown directive %q", line)
		default:
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			send(line)
			if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil && !nowait {
				out.await(t, "response "+string(m.ID), 0, responseTo(string(m.ID)))
			}
			nowait = false
		}
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("the agent did not end after stdin closed")
	}
	deadline := time.After(waitLimit)
	for {
		out.mu.Lock()
		ended, ch := out.ended, out.changed
		out.mu.Unlock()
		if ended {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("stdout did not end")
		}
	}
	sessionOf()
	var b strings.Builder
	for _, l := range out.lines {
		if session != "" {
			l = strings.ReplaceAll(l, session, "$SESSION")
		}
		l = strings.ReplaceAll(l, dir, "$TMP")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	got := b.String()
	if testenv.Update(t, *update) {
		for i, f := range ar.Files {
			if f.Name == "out" {
				ar.Files[i].Data = []byte(got)
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		// Compared again as written: a rewrite the format cannot hold fails.
		again, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sections["out"] = ""
		for _, f := range again.Files {
			if f.Name == "out" {
				sections["out"] = string(f.Data)
			}
		}
	}
	if want := sections["out"]; got != want {
		t.Errorf("stdout differs\n--- want\n%s--- got\n%s", want, got)
	}
}
