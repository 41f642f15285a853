package tui

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/sessions"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/internal/testenv"
	"github.com/pisces-agent/pisces/internal/tools"
)

var update = flag.Bool("update", false, "rewrite the golden screens")

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// waitLimit bounds every wait: generous for a loaded two-core machine.
const waitLimit = 30 * time.Second

// driver runs a Model the way the program does, on the test goroutine:
// commands run in goroutines and their messages come back through msgs.
type driver struct {
	t    *testing.T
	m    *Model
	mgr  *sessions.Manager
	dir  string
	msgs chan tea.Msg
	quit bool
}

// newDriver builds a UI over a fresh session answered by script (the
// scripted provider's JSON), with the bash tool, at 80x24.
func newDriver(t *testing.T, script string, mod func(*Options)) *driver {
	t.Helper()
	return newDriverWith(t, script, mod, driverSetup{})
}

// driverSetup changes what newDriverWith builds.
type driverSetup struct {
	// registry builds the registry for the agent dir (nil: an empty one);
	// the scripted provider is added to it.
	registry func(agentDir string) *models.Registry
	// core changes each session's options.
	core func(agentDir string, o *core.Options)
}

func newDriverWith(t *testing.T, script string, mod func(*Options), setup driverSetup) *driver {
	t.Helper()
	dir := t.TempDir()
	// The screens show the session's directory: one name for every run.
	cwd := filepath.Join(dir, "project")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := scripted.Parse([]byte(script), "test")
	if err != nil {
		t.Fatal(err)
	}
	agentDir := filepath.Join(dir, "agent")
	reg := models.NewRegistry()
	if setup.registry != nil {
		reg = setup.registry(agentDir)
	}
	reg.Add(&models.ProviderEntry{Name: scripted.ProviderName, Provider: p, Models: []*ai.Model{p.Model()}, NoKey: true})
	sessDir := filepath.Join(dir, "sessions")
	build := func(req sessions.BuildRequest) (*sessions.Built, error) {
		st, err := settings.Load(agentDir, "")
		if err != nil {
			return nil, err
		}
		ts := tools.All(tools.Env{Cwd: req.Store.Cwd(), AgentDir: agentDir})
		o := core.Options{
			Tools: ts, ActiveTools: []string{"bash"},
			AgentDir: agentDir, Cwd: req.Store.Cwd(), Settings: st, Models: reg, Store: req.Store,
			SessionDir: sessDir, Model: p.Model(), ThinkingLevel: "off", PreferStored: !req.Initial,
			SystemPrompt: "You are a test agent.", NoContextFiles: true, Log: io.Discard,
		}
		if setup.core != nil {
			setup.core(agentDir, &o)
		}
		s, err := core.New(o)
		if err != nil {
			return nil, err
		}
		return &sessions.Built{Core: s}, nil
	}
	mgr := sessions.New(sessions.Options{Build: build, Grace: -1, Log: io.Discard})
	t.Cleanup(mgr.Close)
	st, err := session.New(session.Options{Dir: sessDir, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	live, err := mgr.Adopt(st)
	if err != nil {
		t.Fatal(err)
	}
	mgr.Acquire(live) // as the command line does
	mgr.Unpin(live)
	opts := Options{Manager: mgr, Live: live, Version: "test"}
	if mod != nil {
		mod(&opts)
	}
	d := &driver{t: t, m: New(opts), mgr: mgr, dir: dir, msgs: make(chan tea.Msg, 64)}
	t.Cleanup(d.m.Close)
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.exec(d.m.Init())
	return d
}

// exec runs a command as the program does (batches split).
func (d *driver) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				d.exec(c)
			}
		default:
			d.msgs <- msg
		}
	}()
}

func (d *driver) send(msg tea.Msg) {
	if _, ok := msg.(tea.QuitMsg); ok {
		d.quit = true
		return
	}
	_, cmd := d.m.Update(msg)
	d.exec(cmd)
}

// key presses one key, spelled as the library does ("enter", "ctrl+c").
func (d *driver) key(k string) {
	d.send(keyMsg(k))
}

// typeText types text, one key per character.
func (d *driver) typeText(s string) {
	for _, r := range s {
		d.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	mods := tea.KeyMod(0)
	parts := strings.Split(k, "+")
	for _, p := range parts[:len(parts)-1] {
		switch p {
		case "ctrl":
			mods |= tea.ModCtrl
		case "alt":
			mods |= tea.ModAlt
		case "shift":
			mods |= tea.ModShift
		}
	}
	code := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"tab": tea.KeyTab, "backspace": tea.KeyBackspace, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd, "delete": tea.KeyDelete,
	}
	last := parts[len(parts)-1]
	c, ok := code[last]
	if !ok {
		c = []rune(last)[0]
	}
	return tea.KeyPressMsg{Code: c, Mod: mods}
}

// waitFor applies the messages of running commands until cond holds.
func (d *driver) waitFor(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for !cond() {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-deadline.C:
			d.t.Fatalf("waiting for %s: timed out; screen:\n%s", what, d.screen())
		}
	}
}

// screen is the view as plain text, the temporary directory written $TMP.
func (d *driver) screen() string {
	s := ansi.Strip(d.m.View().Content)
	s = strings.ReplaceAll(s, d.dir, "$TMP")
	for _, f := range spinFrames { // the spinner's frame depends on time
		s = strings.ReplaceAll(s, f+" Working", "* Working")
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.Join(lines, "\n")
}

func (d *driver) contains(s string) func() bool {
	return func() bool { return strings.Contains(d.screen(), s) }
}

// golden compares the screen with testdata/screens/<name>.txt.
func (d *driver) golden(name string) {
	d.t.Helper()
	path := filepath.Join("testdata", "screens", name+".txt")
	got := d.screen() + "\n"
	if testenv.Update(d.t, *update) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			d.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			d.t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		d.t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		d.t.Errorf("screen %s differs (-update rewrites it)\n--- got ---\n%s--- want ---\n%s", name, got, want)
	}
}
