package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/internal/cli"
	"github.com/pisces-agent/pisces/internal/codemode"
	"github.com/pisces-agent/pisces/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the expected output of transcript tests")

// exampleBins holds the example extensions and the test MCP server, built
// once for the transcripts that use them ($GATE in args, $MCPSERVER in
// files; the directory is $BIN in the output).
var exampleBins string

func TestMain(m *testing.M) {
	if codemode.IsChild() {
		os.Exit(codemode.ChildMain(os.Stdin, os.Stdout))
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "pisces-examples")
	if err != nil {
		panic(err)
	}
	exampleBins = dir
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "permission-gate"), "../../examples/extensions/permission-gate")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		panic(err)
	}
	cmd = exec.Command("go", "build", "-o", filepath.Join(dir, "mcpserver"), "./testdata/mcpserver")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// A transcript (testdata/rpc/*.txtar) drives the whole program in RPC mode:
//
//	-- args --        extra command-line flags, one per line (optional)
//	-- script.json -- the scripted provider's script
//	-- settings.json -- <agentDir>/settings.json (optional)
//	-- project-session-dirs -- (empty) no --session-dir: each project's
//	                  sessions go to its own folder under <agentDir>/sessions,
//	                  whose name ($TMP with its separators as dashes) is
//	                  normalised to $TMP_DASHED
//	-- oauth --       (optional) starts a local server speaking the vendors'
//	                  OAuth wire (internal/auth/authtest) that every login
//	                  and refresh of the process talks to; the section is
//	                  JSON setting its fields ({"Interval":1,"Pending":1,
//	                  "Models":[...]}). Its address is $OAUTH in the input,
//	                  files and output
//	-- in --          JSONL sent on stdin, plus directives:
//	                    #wait TYPE [N]  wait until the Nth (default 1) output line of that type
//	                    #poll CMD TEXT  send the command CMD (JSON, no id) until its
//	                                    response contains TEXT; these commands and
//	                                    their responses are left out of the output
//	                    #touch NAME     create the empty file $TMP/NAME (a tool
//	                                    waiting for it with a shell loop runs
//	                                    until the transcript lets it finish)
//	                    #nowait         do not wait for the next line's response
//	                    #response ID    wait for the response to ID
//	                    #authorize      play the user in the browser: fetch the
//	                                    url of the latest open_url request and
//	                                    keep where it redirects as $REDIRECT
//	                  a line with an "id" waits for its response before the next
//	                  line is sent.
//	-- out --         the expected stdout, normalised (timestamps, ids, paths).
//
// Expected output is first written by hand from the reference shapes; -update
// rewrites it (refused when CI is set), and the result must be read before it
// is committed. Nothing waits by sleeping: a transcript waits for an output
// line (#wait, #response) or polls state (#poll), and a tool that must still
// be running when a command arrives waits for a file (#touch).
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/rpc/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, f := range files {
		f, _ := filepath.Abs(f) // transcripts may change the working directory
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			runTranscript(t, f)
		})
	}
}

type outBuf struct {
	mu    sync.Mutex
	lines []string
	cond  *sync.Cond
	done  bool
}

func (o *outBuf) add(l string) {
	o.mu.Lock()
	o.lines = append(o.lines, l)
	o.cond.Broadcast()
	o.mu.Unlock()
}

// waitFor blocks until pred holds over the lines or a minute passes.
func (o *outBuf) waitFor(t *testing.T, what string, pred func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	timer := time.AfterFunc(time.Minute, func() {
		o.mu.Lock()
		o.cond.Broadcast()
		o.mu.Unlock()
	})
	defer timer.Stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	for !pred(o.lines) {
		if o.done || time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; output so far:\n%s", what, strings.Join(o.lines, "\n"))
		}
		o.cond.Wait()
	}
}

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
	agentDir := filepath.Join(dir, "agent")
	sessDir := filepath.Join(dir, "sessions")
	os.MkdirAll(agentDir, 0o755)
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(strings.ReplaceAll(sections["script.json"], "$TMP", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, ok := sections["settings.json"]; ok {
		os.WriteFile(filepath.Join(agentDir, "settings.json"), []byte(s), 0o644)
	}
	for name, data := range sections {
		if strings.HasPrefix(name, "files/") {
			p := filepath.Join(dir, strings.TrimPrefix(name, "files/"))
			os.MkdirAll(filepath.Dir(p), 0o755)
			mode := os.FileMode(0o644)
			if strings.Contains(name, "/extensions/") {
				mode = 0o755
			}
			data = strings.ReplaceAll(data, "$MCPSERVER", filepath.Join(exampleBins, "mcpserver"))
			os.WriteFile(p, []byte(strings.ReplaceAll(data, "$TMP", dir)), mode)
		}
	}
	var oauthURL, redirect string
	if cfg, ok := sections["oauth"]; ok {
		srv := authtest.New(t)
		srv.Set(func(s *authtest.Server) {
			if err := json.Unmarshal([]byte(cfg), s); err != nil {
				t.Fatalf("oauth section: %v", err)
			}
		})
		oauthURL = srv.URL
		t.Setenv(auth.ServerEnv, oauthURL)
		for _, name := range []string{"GITHUB_TOKEN", "GH_TOKEN", "COPILOT_GITHUB_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
			t.Setenv(name, "")
		}
	}
	if c, ok := sections["cwd"]; ok {
		t.Chdir(filepath.Join(dir, strings.TrimSpace(c)))
	}
	args := []string{"--mode", "rpc", "--provider", "scripted", "--script", script,
		"--agent-dir", agentDir, "--system-prompt", "You are a test agent.", "--no-context-files"}
	if _, ok := sections["project-session-dirs"]; ok {
		sessDir = filepath.Join(agentDir, "sessions")
	} else {
		args = append(args, "--session-dir", sessDir)
	}
	for _, l := range strings.Split(sections["args"], "\n") {
		if l = strings.TrimSpace(l); l != "" {
			l = strings.ReplaceAll(l, "$GATE", filepath.Join(exampleBins, "permission-gate"))
			args = append(args, strings.ReplaceAll(l, "$TMP", dir))
		}
	}
	inR, inW := io.Pipe()
	// stdout is an operating-system pipe, as a client's is: responses
	// are then written by the goroutine that made them when nothing is
	// queued ahead (the RPC writer's direct path), and the order these
	// transcripts pin covers that path too.
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	out := &outBuf{}
	out.cond = sync.NewCond(&out.mu)
	var stderr bytes.Buffer
	var stderrMu sync.Mutex
	exit := make(chan int, 1)
	before := piscesGoroutines(nil)
	go func() {
		code := cli.Main(args, cli.IO{Stdin: inR, Stdout: outW, Stderr: lockedWriter{&stderr, &stderrMu}, StdinIsTTY: true})
		outW.Close()
		exit <- code
	}()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			out.add(sc.Text())
		}
		out.mu.Lock()
		out.done = true
		out.cond.Broadcast()
		out.mu.Unlock()
	}()
	out.waitFor(t, "ready", func(ls []string) bool { return len(ls) > 0 })
	nowait := false
	for _, line := range strings.Split(sections["in"], "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		if strings.HasPrefix(line, "#") {
			f := strings.Fields(line)
			switch f[0] {
			case "#wait":
				n := 1
				if len(f) > 2 {
					n, _ = strconv.Atoi(f[2])
				}
				typ := f[1]
				out.waitFor(t, line, func(ls []string) bool { return countType(ls, typ) >= n })
			case "#nowait":
				nowait = true
			case "#response":
				id := f[1]
				out.waitFor(t, line, func(ls []string) bool { return hasResponse(ls, id) })
			case "#touch":
				if err := os.WriteFile(filepath.Join(dir, f[1]), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			case "#authorize":
				redirect = authorize(t, out)
			case "#poll":
				poll(t, inW, out, strings.TrimSpace(strings.TrimPrefix(line, "#poll")))
			default:
				t.Fatalf("unknown directive %s", line)
			}
			continue
		}
		line = strings.ReplaceAll(line, "$TMP", dir)
		if oauthURL != "" {
			line = strings.ReplaceAll(line, "$OAUTH", oauthURL)
		}
		if redirect != "" {
			line = strings.ReplaceAll(line, "$REDIRECT", redirect)
		}
		if strings.Contains(line, "$UI") {
			line = strings.ReplaceAll(line, "$UI", lastRequestID(out, "extension_ui_request"))
		}
		if strings.Contains(line, "$HOST") {
			line = strings.ReplaceAll(line, "$HOST", lastRequestID(out, "host_tool_call"))
		}
		if strings.Contains(line, "$ENTRY") {
			line = resolveEntryRefs(t, line, sessDir)
		}
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if id := idOf(line); id != "" && !nowait {
			out.waitFor(t, "response "+id, func(ls []string) bool { return hasResponse(ls, id) })
		}
		nowait = false
	}
	inW.Close()
	var code int
	select {
	case code = <-exit:
	case <-time.After(time.Minute):
		t.Fatal("pisces did not exit after stdin closed")
	}
	<-readDone
	checkNoLeftovers(t, before)
	if code != 0 {
		stderrMu.Lock()
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr.String())
	}
	var kept []string
	for _, l := range out.lines {
		if !strings.HasPrefix(l, `{"id":"`+pollPrefix) {
			kept = append(kept, l)
		}
	}
	got := strings.Join(kept, "\n") + "\n"
	if oauthURL != "" {
		got = normaliseOAuth(got, oauthURL)
	}
	got = normalise(got, dir)
	want := sections["out"]
	if testenv.Update(t, *update) {
		for i := range ar.Files {
			if ar.Files[i].Name == "out" {
				ar.Files[i].Data = []byte(got)
			}
		}
		if _, ok := sections["out"]; !ok {
			ar.Files = append(ar.Files, txtar.File{Name: "out", Data: []byte(got)})
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		// Compare with what the file now holds: output that the archive
		// format cannot carry (a line starting "-- ") must not pass.
		written, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want = ""
		for _, f := range written.Files {
			if f.Name == "out" {
				want = string(f.Data)
			}
		}
	}
	if got != want {
		t.Errorf("output differs (-want +got):\n%s", lineDiff(want, got))
	}
}

// authorize plays the user who opens the address of the latest open_url
// request and approves: the fake vendor redirects at once, and where to is
// returned (the address a user would paste).
func authorize(t *testing.T, o *outBuf) string {
	t.Helper()
	o.mu.Lock()
	var u string
	for i := len(o.lines) - 1; i >= 0 && u == ""; i-- {
		var v struct {
			Type, Method, URL string
		}
		if json.Unmarshal([]byte(o.lines[i]), &v) == nil && v.Type == "extension_ui_request" && v.Method == "open_url" {
			u = v.URL
		}
	}
	o.mu.Unlock()
	if u == "" {
		t.Fatal("#authorize: no open_url request so far")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("#authorize: %v", err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || loc == "" {
		t.Fatalf("#authorize: %s answered %s without a redirect", u, resp.Status)
	}
	return loc
}

var (
	// reRandomQuery matches the random members of an authorization address.
	reRandomQuery = regexp.MustCompile(`(code_challenge|state|nonce)=[A-Za-z0-9_%-]+`)
	// reExpires matches a login's expiry (Unix ms): now plus the
	// lifetime the fake vendor gives.
	reExpires = regexp.MustCompile(`"expires":\d+`)
)

// normaliseOAuth writes the fake vendor's address as $OAUTH, the random
// members of authorization addresses as X and expiry times as 0.
func normaliseOAuth(s, oauthURL string) string {
	s = strings.ReplaceAll(s, oauthURL, "$OAUTH")
	s = reExpires.ReplaceAllString(s, `"expires":0`)
	return reRandomQuery.ReplaceAllString(s, "${1}=X")
}

// pollPrefix starts the ids of #poll commands.
const pollPrefix = "poll-"

var pollSeq int

// poll sends the command of a #poll directive ("CMD TEXT") until its
// response contains TEXT, for up to a minute.
func poll(t *testing.T, in io.Writer, out *outBuf, directive string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(directive))
	var cmd map[string]any
	if err := dec.Decode(&cmd); err != nil {
		t.Fatalf("#poll %s: %v", directive, err)
	}
	want := strings.TrimSpace(directive[dec.InputOffset():])
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		pollSeq++
		id := fmt.Sprintf("%s%d", pollPrefix, pollSeq)
		cmd["id"] = id
		b, _ := json.Marshal(cmd)
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		var resp string
		out.waitFor(t, "response "+id, func(ls []string) bool {
			for _, l := range ls {
				if strings.HasPrefix(l, fmt.Sprintf(`{"id":%q,"type":"response"`, id)) {
					resp = l
					return true
				}
			}
			return false
		})
		if strings.Contains(resp, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("#poll %s: no response with %s within a minute; the last: %s", directive, want, resp)
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func idOf(line string) string {
	var v struct {
		ID   any    `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(line), &v) != nil {
		return ""
	}
	if s, ok := v.ID.(string); ok && v.Type != "extension_ui_response" && !strings.HasPrefix(v.Type, "host_tool_") {
		return s
	}
	return ""
}

// lastRequestID is the id of the latest line of type typ written.
func lastRequestID(o *outBuf, typ string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.lines) - 1; i >= 0; i-- {
		var v struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if json.Unmarshal([]byte(o.lines[i]), &v) == nil && v.Type == typ {
			return v.ID
		}
	}
	return ""
}

func countType(lines []string, typ string) int {
	n := 0
	needle := `"type":"` + typ + `"`
	for _, l := range lines {
		if strings.HasPrefix(l, "{"+needle) || strings.Contains(l, ","+needle) && strings.HasPrefix(l, `{"id"`) {
			n++
		}
	}
	return n
}

func hasResponse(lines []string, id string) bool {
	prefix := fmt.Sprintf(`{"id":%q,"type":"response"`, id)
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// resolveEntryRefs replaces $ENTRY[n] with the id of the nth entry (from 0,
// header excluded) of the newest session file under sessDir.
func resolveEntryRefs(t *testing.T, line, sessDir string) string {
	var files []string
	filepath.WalkDir(sessDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	var newest string
	var mt time.Time
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && !fi.ModTime().Before(mt) {
			newest, mt = f, fi.ModTime()
		}
	}
	if newest == "" {
		t.Fatalf("no session file for %s", line)
	}
	b, _ := os.ReadFile(newest)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")[1:]
	re := regexp.MustCompile(`\$ENTRY\[(\d+)\]`)
	return re.ReplaceAllStringFunc(line, func(m string) string {
		n, _ := strconv.Atoi(re.FindStringSubmatch(m)[1])
		var e struct {
			ID string `json:"id"`
		}
		json.Unmarshal([]byte(lines[n]), &e)
		return e.ID
	})
}

// estimatedTokensAfter counts the system prompt, which names the working
// directory: its value depends on where the checkout is, so it is
// normalised (internal/compaction tests the estimate itself).
var (
	reMs        = regexp.MustCompile(`"(timestamp|durationMs|startedAt|endedAt|totalDurationMs|wallTimeMs|estimatedTokensAfter|lastUpdate)":\d+`)
	reSeconds   = regexp.MustCompile(`completed in \d+\.\d+s`)
	reRate      = regexp.MustCompile(`"tokensPerSecond":[0-9.e+-]+`)
	reISO       = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}[.-]\d{3}Z`)
	reDate      = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
	reUUID      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reEntryID   = regexp.MustCompile(`"(id|parentId|leafId|targetId|entryId|firstKeptEntryId|fromId)":"[0-9a-f]{8}"`)
	reTmpSuffix = regexp.MustCompile(`pisces-bash-[0-9a-f]+\.log`)
	reUIID      = regexp.MustCompile(`"type":"(extension_ui_request|host_tool_call|host_tool_cancel)","id":"[0-9a-f]{16}"`)
	reUITarget  = regexp.MustCompile(`"targetId":"[0-9a-f]{16}"`)
)

func normalise(s, dir string) string {
	s = strings.ReplaceAll(s, exampleBins, "$BIN")
	s = strings.ReplaceAll(s, dir, "$TMP")
	// A project's session folder is named after its path with the
	// separators as dashes.
	s = strings.ReplaceAll(s, strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(strings.TrimLeft(dir, "/\\")), "$TMP_DASHED")
	if wd, err := os.Getwd(); err == nil && !strings.HasPrefix(wd, dir) {
		s = strings.ReplaceAll(s, wd, "$CWD")
	}
	s = reMs.ReplaceAllString(s, `"$1":0`)
	s = reSeconds.ReplaceAllString(s, "completed in 0.0s")
	// A measured rate (null stays null).
	s = reRate.ReplaceAllString(s, `"tokensPerSecond":"<rate>"`)
	s = reISO.ReplaceAllString(s, "<ts>")
	s = reDate.ReplaceAllString(s, "<date>")
	s = reUUID.ReplaceAllString(s, "<uuid>")
	// Entry ids are random: number them in order of appearance.
	ids := map[string]string{}
	s = reEntryID.ReplaceAllStringFunc(s, func(m string) string {
		sub := reEntryID.FindStringSubmatch(m)
		v := m[len(sub[1])+4 : len(m)-1]
		n, ok := ids[v]
		if !ok {
			n = fmt.Sprintf("E%d", len(ids)+1)
			ids[v] = n
		}
		return fmt.Sprintf("%q:%q", sub[1], n)
	})
	s = reTmpSuffix.ReplaceAllString(s, "pisces-bash-X.log")
	s = reUIID.ReplaceAllString(s, `"type":"$1","id":"<id>"`)
	s = reUITarget.ReplaceAllString(s, `"targetId":"<id>"`)
	return s
}

func lineDiff(want, got string) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	var b strings.Builder
	n := len(w)
	if len(g) > n {
		n = len(g)
	}
	shown := 0
	for i := 0; i < n && shown < 30; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n-%s\n+%s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}

// checkNoLeftovers fails the test when goroutines of Pisces' own packages
// are still running a while after Main returned: whatever Main started
// (extension processes' loops, MCP connections, signal watchers, trust
// questions) must end with it, or it could touch the next run's state.
// Goroutines that were there before Main started (an earlier test's) are
// not this run's.
func checkNoLeftovers(t *testing.T, before map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := slices.Collect(maps.Values(piscesGoroutines(before)))
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines still running 10 s after Main returned:\n%s", strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// piscesGoroutines returns the stacks of the goroutines with a frame in one
// of Pisces' packages, other than the tests' own, by goroutine header
// ("goroutine 12"), leaving out those in except.
func piscesGoroutines(except map[string]string) map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		f := strings.Fields(g)
		if len(f) < 2 {
			continue
		}
		id := f[0] + " " + f[1]
		if _, old := except[id]; old {
			continue
		}
		if strings.Contains(g, "github.com/pisces-agent/pisces/internal/") && !strings.Contains(g, "internal/cli_test.") {
			out[id] = g
		}
	}
	return out
}
