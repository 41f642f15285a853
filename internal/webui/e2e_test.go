package webui_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/pisces-agent/pisces/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// waitLimit bounds every wait in the browser: generous, so that a loaded
// two-core machine passes; it only decides how long a broken test takes to
// fail.
const waitLimit = 90 * time.Second

const e2eToken = "e2e-token-0123456789abcdef"

// e2eScript is what the scripted model answers, turn by turn. The first
// answer streams slowly (eight pieces, 60 ms apart), so the page shows it
// growing; the second holds markup that must not run; the third is a
// destructive command the permission gate asks about.
const e2eScript = `{
  "turns": [
    {"match": "run the tool", "chunkSize": 12, "delayMs": 60, "content": [
      {"type": "text", "text": "Streaming the answer in pieces, then running the tool."},
      {"type": "toolCall", "name": "bash", "arguments": {"command": "echo tool-output-$((6*7))"}}
    ]},
    {"content": [{"type": "text", "text": "Done. <img id=\"evil\" src=x onerror=\"window.__pwned=1\"> and [a link](javascript:window.__pwned=2) and <script>window.__pwned=3</script>"}]},
    {"match": "clean the build", "content": [{"type": "toolCall", "name": "bash", "arguments": {"command": "rm -rf build && echo removed-build"}}]},
    {"content": [{"type": "text", "text": "The build folder is gone."}]},
    {"match": "in the new session", "content": [{"type": "text", "text": "Answer in the second session."}]}
  ]
}`

// server is a pisces --mode web process for one test.
type server struct {
	t        *testing.T
	url      string // the printed UI address, with the token
	dir      string // the project directory
	agentDir string
	script   string
	gate     string // the permission-gate extension
	stop     func() // ends the process (SIGINT) and waits for it
}

// startServer prepares a project (with a build folder to delete) and an
// agent directory and starts web mode on a free port.
func startServer(t *testing.T) *server {
	t.Helper()
	root := t.TempDir()
	s := &server{t: t, dir: filepath.Join(root, "project"), agentDir: filepath.Join(root, "agent"),
		script: filepath.Join(root, "script.json"), gate: filepath.Join(root, "permission-gate")}
	for _, d := range []string{filepath.Join(s.dir, "build"), s.agentDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "build", "out.bin"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.script, []byte(e2eScript), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", s.gate, "github.com/pisces-agent/pisces/examples/extensions/permission-gate")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the permission gate: %v\n%s", err, out)
	}
	s.start("0")
	return s
}

// start runs web mode on port ("0": a free one) over the server's
// directories, and sets url and stop.
func (s *server) start(port string, extra ...string) {
	t := s.t
	t.Helper()
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--mode", "web", "--port", port, "--agent-dir", s.agentDir,
		"--provider", "scripted", "--script", s.script, "-e", s.gate}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "PISCES_WEB_TOKEN="+e2eToken)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testenv.LockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(waitLimit):
				cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				t.Logf("pisces stderr:\n%s", stderr.String())
			}
		})
	}
	t.Cleanup(s.stop)
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, "UI: ") {
			t.Fatalf("first line of web mode: %q (ok %v); stderr:\n%s", line, ok, stderr.String())
		}
		s.url = strings.TrimPrefix(line, "UI: ")
	case <-time.After(waitLimit):
		t.Fatalf("web mode printed nothing; stderr:\n%s", stderr.String())
	}
}

// browser is a headless Chromium driven over the DevTools protocol.
type browser struct {
	t     *testing.T
	name  string // in screenshot names, for a second tab
	ctx   context.Context
	shots []string
	step  int
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	chrome := testenv.LookPath(t, "chromium", "chromium-browser", "google-chrome")
	// chromedp's defaults (headless, no first run, no background
	// networking, no /dev/shm, ...) plus what a root user in a container
	// needs, and nothing that reaches out of the machine.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		if t.Failed() {
			b.screenshot("failure")
			for _, p := range b.shots {
				t.Logf("screenshot: %s", p)
			}
		}
		cancelCtx()
		cancelAlloc()
	})
	// Start the browser now (without a deadline: the first run's context
	// lives as long as the browser), so that one that cannot start fails
	// here.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", chrome, err)
	}
	return b
}

// do runs actions and fails the test, naming what, when they fail.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval returns the value of a JavaScript expression.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript expression until it is true.
func (b *browser) waitFor(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit+10*time.Second)
	defer cancel()
	deadline := time.Now().Add(waitLimit)
	var err error
	for {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Until(deadline)), chromedp.WithPollingInterval(50*time.Millisecond)))
		// A poll that began while the page was being replaced (the
		// redirect that drops the token, a reload) lost its document:
		// poll the new one.
		if err == nil || time.Now().After(deadline) || !documentLost(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		b.screenshot("timeout")
		if n := len(b.shots); n > 0 {
			b.t.Logf("screenshot of the tab that timed out: %s", b.shots[n-1])
		}
		b.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// documentLost reports whether err says that the page's document went away
// while JavaScript was evaluated in it.
func documentLost(err error) bool {
	m := err.Error()
	return strings.Contains(m, "Cannot find context with specified id") || strings.Contains(m, "Execution context was destroyed")
}

// download runs the action that starts a download and returns the name the
// page gave the file and its content, once the browser has saved it.
func (b *browser) download(what string, start chromedp.Action[chromedp.Void]) (string, []byte) {
	b.t.Helper()
	dir := b.t.TempDir()
	ctx, cancel := context.WithTimeout(b.ctx, waitLimit)
	defer cancel()
	begins := chromedp.Events(ctx, cdpbrowser.DownloadWillBegin)
	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
				Behavior:      cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName,
				DownloadPath:  dir,
				EventsEnabled: new(true),
			})
			return err
		}),
		start)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	var name string
	for ev, err := range begins {
		if err != nil {
			b.t.Fatalf("%s: waiting for the download to begin: %v", what, err)
		}
		name = ev.SuggestedFilename
		break
	}
	for ev, err := range progress {
		if err != nil {
			b.t.Fatalf("%s: waiting for the download: %v", what, err)
		}
		switch ev.State {
		case cdpbrowser.DownloadProgressStateCompleted:
			content, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				b.t.Fatalf("%s: the downloaded file: %v", what, err)
			}
			return name, content
		case cdpbrowser.DownloadProgressStateCanceled:
			b.t.Fatalf("%s: the browser cancelled the download", what)
		}
	}
	b.t.Fatalf("%s: no download completed", what)
	return "", nil
}

// screenshot saves the page as e2e-screenshots/<test>-<n>-<name>.png
// (a folder git ignores).
func (b *browser) screenshot(name string) {
	dir, err := filepath.Abs("e2e-screenshots")
	if err != nil {
		return
	}
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	b.step++
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return
	}
	if b.name != "" {
		name = b.name + "-" + name
	}
	p := filepath.Join(dir, fmt.Sprintf("%s-%02d-%s.png", strings.ReplaceAll(b.t.Name(), "/", "_"), b.step, name))
	if os.WriteFile(p, png, 0o644) == nil {
		b.shots = append(b.shots, p)
	}
}

const conversationText = `(document.querySelector('[data-testid=conversation]')?.innerText || "")`

// TestBrowserEndToEnd opens the printed address in headless Chromium and
// uses the built-in UI as a person would: a prompt answered with streamed
// text, a tool run and its output, markup in a reply that must not run, an
// extension's confirm dialog, switching sessions, and the session tree.
func TestBrowserEndToEnd(t *testing.T) {
	srv := startServer(t)
	b := startBrowser(t)

	// Open the printed address: the token becomes a cookie, the address
	// loses it, and the page connects.
	b.do("opening the UI", chromedp.Navigate(srv.url))
	b.waitFor("the prompt box", `!!document.querySelector('[data-testid=prompt]')`)
	b.waitFor("the connection", `!document.querySelector('.banner') && document.querySelector('[data-testid=session-name]') !== null && !!document.querySelector('.picker')`)
	loc := eval[string](b, `window.location.href`)
	if strings.Contains(loc, "token=") {
		t.Errorf("the address still holds the token after the redirect: %s", loc)
	}
	b.screenshot("connected")

	// Record every state of the streaming answer's text, to see it grow.
	eval[bool](b, `(() => {
		window.__seen = [];
		const conv = document.querySelector('[data-testid=conversation]');
		new MutationObserver(() => {
			const md = conv.querySelector('.msg.assistant .md');
			if (md) window.__seen.push(md.innerText);
		}).observe(conv, {subtree: true, childList: true, characterData: true});
		return true;
	})()`)

	b.do("sending a prompt",
		chromedp.Click(chromedp.CSS(`[data-testid=prompt]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=prompt]`), "please run the tool"+kb.Enter))
	b.waitFor("the user's message", conversationText+`.includes("please run the tool")`)
	const answer = "Streaming the answer in pieces, then running the tool."
	b.waitFor("the streamed answer", conversationText+`.includes(`+jsString(answer)+`)`)
	seen := eval[[]string](b, `window.__seen`)
	partial := 0
	for _, s := range seen {
		s = strings.TrimSpace(s)
		if s != "" && len(s) < len(answer) && strings.HasPrefix(answer, s) {
			partial++
		}
	}
	if partial == 0 {
		t.Errorf("the answer was never shown in part while it streamed; states seen: %q", seen)
	}

	// The tool ran; its card opens to show the output.
	b.waitFor("the tool call to finish", `!!document.querySelector('.collapsible.tool.done')`)
	b.do("opening the tool call", chromedp.Click(chromedp.CSS(`.collapsible.tool.done .collapsible-head`)))
	b.waitFor("the tool's output", `[...document.querySelectorAll('.tool-output')].some(e => e.innerText.includes("tool-output-42"))`)
	b.screenshot("tool-output")

	// The second answer holds markup that must not run.
	b.waitFor("the reply with markup", conversationText+`.includes("Done.") && !document.querySelector('[data-testid=abort]')`)
	b.waitFor("the image to have failed to load", `(() => { const i = document.querySelector('.md img'); return !!i && i.complete; })()`)
	type markup struct {
		Pwned    any    `json:"pwned"`
		OnError  bool   `json:"onerror"`
		Scripts  int    `json:"scripts"`
		LinkHref string `json:"href"`
	}
	state := eval[markup](b, `(() => {
		const img = document.querySelector('.md img');
		const a = [...document.querySelectorAll('.md a')].find(e => e.innerText === "a link");
		return {
			pwned: window.__pwned === undefined ? null : window.__pwned,
			onerror: !!img && img.hasAttribute('onerror'),
			scripts: document.querySelectorAll('.conversation script').length,
			href: a ? (a.getAttribute('href') || "") : "",
		};
	})()`)
	if state.Pwned != nil || state.OnError || state.Scripts != 0 || strings.HasPrefix(strings.ToLower(state.LinkHref), "javascript:") {
		t.Errorf("markup from the model ran or survived: %+v", state)
	}

	// A second tab on the same session shows the same conversation.
	firstSession := eval[string](b, `new URL(window.location.href).searchParams.get("session") || ""`)
	if firstSession == "" {
		t.Fatal("the address names no session")
	}
	tab2, closeTab2 := chromedp.NewContext(b.ctx)
	defer closeTab2()
	b2 := &browser{t: t, ctx: tab2, name: "tab2"}
	// The first run on a tab's context opens the tab, which lives as long
	// as that run's context: no deadline on it.
	if err := chromedp.Do(tab2, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("opening a second tab: %v", err)
	}
	b2.do("opening a second tab", chromedp.Navigate(strings.SplitN(srv.url, "?", 2)[0]+"?session="+firstSession))
	b2.waitFor("the conversation in the second tab", conversationText+`.includes("Done.")`)

	// A destructive command: the permission gate asks in the page.
	b.do("asking for the clean-up",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=prompt]`), "clean the build folder"+kb.Enter))
	b.waitFor("the confirm dialog", `!!document.querySelector('[data-testid=ext-dialog][data-method=confirm]')`)
	title := eval[string](b, `document.querySelector('[data-testid=ext-dialog] h3').innerText`)
	if !strings.Contains(strings.ToLower(title), "recursive forced delete") {
		t.Errorf("confirm dialog title %q does not name the danger", title)
	}
	b.screenshot("confirm-dialog")
	if _, err := os.Stat(filepath.Join(srv.dir, "build")); err != nil {
		t.Fatalf("the build folder is gone before the dialog was answered: %v", err)
	}
	b2.waitFor("the dialog in the second tab too", `!!document.querySelector('[data-testid=ext-dialog][data-method=confirm]')`)
	b.do("allowing the command", chromedp.Click(chromedp.CSS(`[data-testid=dialog-yes]`)))
	b.waitFor("the answer after the tool", conversationText+`.includes("The build folder is gone.")`)
	// The first answer wins: the other tab's dialog closes, and it shows
	// the run as it goes on.
	b2.waitFor("the second tab's dialog to close, and the answer", `!document.querySelector('[data-testid=ext-dialog]') && `+conversationText+`.includes("The build folder is gone.")`)
	if _, err := os.Stat(filepath.Join(srv.dir, "build")); !os.IsNotExist(err) {
		t.Errorf("the build folder is still there after the command was allowed: %v", err)
	}

	// Switch sessions: a new one in the same directory, then back.
	b.do("starting a new session", chromedp.Click(chromedp.CSS(`[data-testid=new-session]`)))
	b.waitFor("the directory picker", `!!document.querySelector('[data-testid=start-session]') && !document.querySelector('[data-testid=start-session]').disabled`)
	b.do("starting it", chromedp.Click(chromedp.CSS(`[data-testid=start-session]`)))
	b.waitFor("the new session", `new URL(window.location.href).searchParams.get("session") !== `+jsString(firstSession)+
		` && !`+conversationText+`.includes("Done.")`)
	// "/" completes commands, templates and skills.
	// (DevTools' Enter also types a line break after the page took the key
	// and sent the prompt: clear the box first.)
	if v := eval[string](b, `(() => { const p = document.querySelector('[data-testid=prompt]'); const v = p.value; p.value = ""; return v; })()`); strings.TrimSpace(v) != "" {
		t.Errorf("the prompt box still holds %q after sending", v)
	}
	b.do("typing a slash command", chromedp.SendKeys(chromedp.CSS(`[data-testid=prompt]`), "/architect"))
	b.waitFor("the completion", `[...document.querySelectorAll('[data-testid=completion] .cmd-name')].some(e => e.innerText === "/architect-plan")`)
	b.do("erasing it", chromedp.SendKeys(chromedp.CSS(`[data-testid=prompt]`), strings.Repeat(kb.Backspace, len("/architect"))))
	b.waitFor("the completion to close", `!document.querySelector('[data-testid=completion]') && document.querySelector('[data-testid=prompt]').value === ""`)
	// An image goes with the next prompt.
	img := filepath.Join(t.TempDir(), "dot.png")
	writePNG(t, img)
	b.do("attaching an image", chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), []string{img}))
	b.waitFor("the attachment", `!!document.querySelector('.attachment img')`)
	b.do("prompting in the new session",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=prompt]`), "hello in the new session"+kb.Enter))
	b.waitFor("the second session's answer", conversationText+`.includes("Answer in the second session.")`)
	b.waitFor("the image in the user's message", `(() => {
		const i = document.querySelector('.msg.user .images img');
		return !!i && i.src.startsWith("data:image/png;base64,") && i.complete && i.naturalWidth === 2;
	})()`)
	b.waitFor("both sessions in the list", `document.querySelectorAll('[data-testid=session-list] .session-item').length === 2`)
	b.screenshot("second-session")
	b.do("switching back", chromedp.Click(chromedp.CSS(`[data-testid=session-list] .session-item[data-session-id=`+jsString(firstSession)+`] .session-open`)))
	b.waitFor("the first session again", conversationText+`.includes("The build folder is gone.") && !`+conversationText+`.includes("Answer in the second session.")`)
	back := eval[string](b, `new URL(window.location.href).searchParams.get("session") || ""`)
	if back != firstSession {
		t.Errorf("after switching back the address names session %q, want %q", back, firstSession)
	}
	b.screenshot("switched-back")

	// Export: the page arrives as a download in the browser, and nothing
	// is written on the server.
	name, page := b.download("exporting the session", chromedp.Click(chromedp.CSS(`[data-testid=export]`)))
	if !strings.HasSuffix(name, ".html") || !strings.Contains(name, firstSession) {
		t.Errorf("the download is named %q, want the session file's name (session %s) as .html", name, firstSession)
	}
	for _, want := range []string{"<!DOCTYPE html>", "please run the tool", "clean the build folder", "The build folder is gone.", "tool-output-42"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the downloaded page (%d bytes) lacks %q", len(page), want)
		}
	}
	if bytes.Contains(page, []byte("Answer in the second session.")) {
		t.Error("the downloaded page holds the other session's answer")
	}
	filepath.WalkDir(srv.agentDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".html") {
			t.Errorf("exporting from the page wrote %s on the server", p)
		}
		return nil
	})

	// The tree: go back to the first prompt.
	b.do("opening the tree", chromedp.Click(chromedp.CSS(`[data-testid=open-tree]`)))
	b.waitFor("the tree", `document.querySelectorAll('[data-testid=tree-panel] .tree-row.user').length === 2`)
	b.screenshot("tree")
	b.do("choosing the first prompt", chromedp.Click(chromedp.CSS(`[data-testid=tree-panel] .tree-row.user .tree-open`)))
	b.waitFor("the navigate dialog", `!!document.querySelector('[data-testid=navigate-dialog]')`)
	b.do("navigating", chromedp.Click(chromedp.CSS(`[data-testid=navigate-go]`)))
	b.waitFor("the conversation before the first prompt",
		`!`+conversationText+`.includes("please run the tool") && document.querySelector('[data-testid=prompt]').value === "please run the tool"`)
	b.waitFor("the tree to show the new leaf", `(() => {
		const leaf = document.querySelector('[data-testid=tree-panel] .tree-row.leaf');
		return !!leaf && !leaf.classList.contains('user') && document.querySelectorAll('[data-testid=tree-panel] .tree-row.user.on-path').length === 0;
	})()`)
	b.screenshot("navigated")
}

// writePNG writes a 2×2 PNG.
func writePNG(t *testing.T, path string) {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, 2, 2))
	m.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The page reconnects by itself after the server went away and came back
// (on the same port), and reads the session again.
func TestBrowserReconnects(t *testing.T) {
	srv := startServer(t)
	b := startBrowser(t)
	b.do("opening the UI", chromedp.Navigate(srv.url))
	b.waitFor("the connection", `!!document.querySelector('[data-testid=prompt]') && !document.querySelector('.banner') && !!document.querySelector('.picker')`)
	b.do("sending a prompt", chromedp.SendKeys(chromedp.CSS(`[data-testid=prompt]`), "please run the tool"+kb.Enter))
	b.waitFor("the answers", conversationText+`.includes("Done.") && !document.querySelector('[data-testid=abort]')`)
	session := eval[string](b, `new URL(window.location.href).searchParams.get("session") || ""`)
	port := srv.url[strings.LastIndex(srv.url, ":")+1:]
	port = port[:strings.IndexByte(port, '/')]

	srv.stop()
	b.waitFor("the page to notice", `!!document.querySelector('[data-testid=banner]')`)
	b.screenshot("disconnected")
	// Meanwhile another process continues the session: only a new reading
	// of the session shows its answer.
	files, _ := filepath.Glob(filepath.Join(srv.agentDir, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	bin, _ := testenv.PiscesBinary()
	other := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(other, []byte(`{"turns":[{"content":[{"type":"text","text":"written while the page was away"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cont := exec.Command(bin, "--agent-dir", srv.agentDir, "--session", files[0], "--provider", "scripted", "--script", other, "one more")
	cont.Dir = srv.dir
	if out, err := cont.CombinedOutput(); err != nil {
		t.Fatalf("continuing the session in print mode: %v\n%s", err, out)
	}

	srv.start(port)
	b.waitFor("the page to reconnect and read the session again",
		`!document.querySelector('.banner') && `+conversationText+`.includes("written while the page was away") && `+conversationText+`.includes("please run the tool")`)
	if got := eval[string](b, `new URL(window.location.href).searchParams.get("session") || ""`); got != session {
		t.Errorf("after reconnecting the page is on session %q, want %q", got, session)
	}
	// The session answers again: the tree of the reconnected session.
	b.do("opening the tree", chromedp.Click(chromedp.CSS(`[data-testid=open-tree]`)))
	b.waitFor("the tree", `document.querySelectorAll('[data-testid=tree-panel] .tree-row.user').length === 2`)
	b.screenshot("reconnected")
}
