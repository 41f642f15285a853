package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/sessions"
	"github.com/pisces-agent/pisces/rpc"
)

// frameInterval paces the delivery of core events to the screen: the
// events of one interval are applied together and drawn once.
const frameInterval = 16 * time.Millisecond

// doublePress is how close two presses of ctrl+c (exit) or escape (the
// double-escape action) must be.
const doublePress = 500 * time.Millisecond

// feed carries a core session's events to the UI without ever blocking the
// core: the subscriber appends to a list; the UI takes the whole list at
// once (coalescing every delta that arrived meanwhile).
type feed struct {
	mu      sync.Mutex
	pending []rpc.Event
	signal  chan struct{}
	closed  chan struct{}
	once    sync.Once
	last    time.Time
	unsub   func()
}

func newFeed(s *core.Session) *feed {
	f := &feed{signal: make(chan struct{}, 1), closed: make(chan struct{})}
	f.unsub = s.Subscribe(f.push)
	s.StartMCPReports()
	return f
}

func (f *feed) push(ev rpc.Event) {
	f.mu.Lock()
	f.pending = append(f.pending, ev)
	f.mu.Unlock()
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

func (f *feed) close() {
	f.once.Do(func() {
		f.unsub()
		close(f.closed)
	})
}

// eventsMsg is a batch of a feed's events.
type eventsMsg struct {
	f   *feed
	evs []rpc.Event
}

// next waits for events (a tea.Cmd). At most one batch per frame interval
// reaches the screen.
func (f *feed) next() tea.Msg {
	select {
	case <-f.signal:
	case <-f.closed:
		return nil
	}
	if d := frameInterval - time.Since(f.last); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-f.closed:
			t.Stop()
			return nil
		}
	}
	f.mu.Lock()
	evs := f.pending
	f.pending = nil
	f.mu.Unlock()
	f.last = time.Now()
	return eventsMsg{f: f, evs: evs}
}

// Options configure the UI.
type Options struct {
	// Manager and Live are the session manager and the session to show
	// first (adopted by the caller).
	Manager *sessions.Manager
	Live    *sessions.Live
	Theme   *Theme
	Keys    *Keymap
	// Inline draws in the normal screen (finished blocks go to the
	// terminal's scrollback); the default is the alternate screen.
	Inline  bool
	Version string
	// Prompt is sent once the UI is up (the command line's message).
	Prompt string
	Images []ai.Content
	// FollowUps are the command line's further messages, queued after
	// Prompt.
	FollowUps []string
	// OpenResume opens the session picker at start (--resume).
	OpenResume bool
	// Program is the command name shown in the resume hint ("pisces").
	Program string
	// OpenURL opens an address of a login in a browser, when there is
	// one (nil: the address is only shown).
	OpenURL func(url string)
}

// Model is the bubbletea model of the interactive UI.
type Model struct {
	opts Options
	th   *Theme
	keys *Keymap

	mgr  *sessions.Manager
	live *sessions.Live
	sess *core.Session
	feed *feed

	width, height int

	blocks     []*block
	cur        *block            // the assistant message streaming
	tools      map[string]*block // tool blocks by call id
	bashes     map[string]*block // user bash blocks by id
	bashSeq    int
	images     []ai.Content // attached to the next message
	imageNames []string
	files      []string // the project's files for @ completion (loaded on first use)
	filesDir   string
	printed    int      // inline mode: blocks written to the scrollback
	started    bool     // inline mode: the start header is written
	toPrint    []string // inline mode: lines waiting for the scrollback

	editor       textarea.Model
	edit         editState
	history      []string
	histIdx      int // len(history) when not browsing
	streaming    bool
	spin         int
	spinning     bool
	steering     []string
	followUp     []string
	scroll       int // lines scrolled up from the bottom
	expanded     bool
	showThinking bool
	notice       string
	noticeErr    bool

	menu    *picker // the slash menu (follows the editor)
	overlay *picker // a selector in place of the editor
	dialog  *dialog // an extension's input/confirm dialog
	login   *loginView

	lastCtrlC time.Time
	lastEsc   time.Time

	usage    ai.Usage
	cost     float64
	ctxUsage core.ContextUsage

	statuses map[string]string   // extension status entries by key
	widgets  map[string][]string // extension widgets by key
	title    string              // the window title an extension set

	quitting bool
	// now is the clock (tests fix it).
	now func() time.Time
}

// New builds the model over opts.Live.
func New(opts Options) *Model {
	th := opts.Theme
	if th == nil {
		th, _ = ThemeByName("")
	}
	keys := opts.Keys
	if keys == nil {
		keys, _ = LoadKeymap("")
	}
	if opts.Program == "" {
		opts.Program = "pisces"
	}
	m := &Model{opts: opts, th: th, keys: keys, mgr: opts.Manager, width: 80, height: 24, now: time.Now,
		showThinking: true}
	m.editor = newEditor(th)
	bindEditor(&m.editor, keys)
	m.attach(opts.Live)
	return m
}

func newEditor(th *Theme) textarea.Model {
	ta := textarea.New()
	ta.Prompt = ""
	ta.ShowLineNumbers = false
	ta.Placeholder = ""
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 10
	ta.KeyMap.InsertNewline.SetEnabled(false)
	// The terminal's own cursor, placed by the view (no blinking block
	// redrawn by timer).
	ta.SetVirtualCursor(false)
	st := textarea.DefaultStyles(!th.light)
	st.Focused.CursorLine = lipgloss.NewStyle()
	st.Focused.Base = lipgloss.NewStyle()
	st.Blurred.Base = lipgloss.NewStyle()
	ta.SetStyles(st)
	ta.Focus()
	return ta
}

// attach makes l the session shown: its transcript is rebuilt and its
// events followed.
func (m *Model) attach(l *sessions.Live) {
	if m.feed != nil {
		m.feed.close()
	}
	m.live, m.sess = l, l.Core
	m.feed = newFeed(l.Core)
	m.reload()
	if ro := l.ReadOnly(); ro != "" {
		m.notify(ro, true)
	}
}

// reload rebuilds the transcript from the session's messages.
func (m *Model) reload() {
	m.tools = map[string]*block{}
	m.bashes = map[string]*block{}
	m.cur = nil
	m.blocks = blocksFromMessages(m.sess.Messages())
	for _, b := range m.blocks {
		if b.kind == kindTool {
			m.tools[b.callID] = b
		}
	}
	m.scroll = 0
	st := m.sess.Stats()
	m.usage, m.cost = st.Tokens, st.Cost
	m.ctxUsage = m.sess.ContextUsage()
	m.streaming = m.sess.IsStreaming()
	m.steering, m.followUp = m.sess.Queues()
}

// Init starts following events (and sends the first prompt).
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.feed.next}
	if m.opts.Prompt != "" || len(m.opts.Images) > 0 {
		s, text, images, rest := m.sess, m.opts.Prompt, m.opts.Images, m.opts.FollowUps
		cmds = append(cmds, func() tea.Msg {
			_, err := s.Prompt(text, images, "")
			for _, f := range rest {
				if err != nil {
					break
				}
				_, err = s.FollowUp(f, nil)
			}
			return resultMsg{err: err}
		})
	}
	if m.opts.OpenResume {
		cmds = append(cmds, m.openResume("cwd"))
	}
	if m.streaming {
		cmds = append(cmds, m.startSpinner())
	}
	return tea.Batch(cmds...)
}

type spinMsg struct{}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (m *Model) startSpinner() tea.Cmd {
	if m.spinning {
		return nil
	}
	m.spinning = true
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return spinMsg{} })
}

// notify shows a one-line notice above the editor.
func (m *Model) notify(s string, isErr bool) {
	m.notice, m.noticeErr = s, isErr
}

func (m *Model) addBlock(b *block) {
	m.blocks = append(m.blocks, b)
}

func (m *Model) info(s string) { m.addBlock(&block{kind: kindInfo, text: s}) }

func (m *Model) errorBlock(s string) { m.addBlock(&block{kind: kindError, text: s}) }

// resultMsg is the end of work done off the UI goroutine: err is shown, then
// after runs on the UI goroutine.
type resultMsg struct {
	err   error
	after func(m *Model) tea.Cmd
}

func (m *Model) promptCmd(text string, images []ai.Content, behavior string) tea.Cmd {
	s := m.sess
	return func() tea.Msg {
		_, err := s.Prompt(text, images, behavior)
		return resultMsg{err: err}
	}
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case printMsg:
		if len(m.toPrint) == 0 {
			return m, nil
		}
		text := strings.Join(m.toPrint, "\n")
		m.toPrint = nil
		return m, tea.Println(text)
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
		m.editor.SetWidth(m.width)
		return m, nil
	case eventsMsg:
		if msg.f != m.feed {
			return m, nil // a session no longer shown
		}
		var cmds []tea.Cmd
		for _, ev := range msg.evs {
			cmds = append(cmds, m.apply(ev))
		}
		cmds = append(cmds, m.feed.next, m.flushInline())
		return m, tea.Batch(cmds...)
	case spinMsg:
		if !m.streaming {
			m.spinning = false
			return m, nil
		}
		m.spin++
		return m, tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return spinMsg{} })
	case resultMsg:
		var cmd tea.Cmd
		if msg.err != nil {
			m.notify(msg.err.Error(), true)
		}
		if msg.after != nil {
			cmd = msg.after(m)
		}
		return m, tea.Batch(cmd, m.flushInline())
	case dialogMsg:
		m.openDialog(msg)
		return m, nil
	case editorDoneMsg:
		m.editorDone(msg)
		return m, nil
	case loginEventMsg, loginDoneMsg:
		return m, m.loginEvent(msg)
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			m.scrollBy(3)
		case tea.MouseWheelDown:
			m.scrollBy(-3)
		}
		return m, nil
	case tea.PasteMsg:
		switch {
		case m.dialog != nil:
			if m.dialog.list == nil {
				m.dialog.input.InsertString(msg.Content)
			}
		case m.login != nil:
			if m.login.answer != nil {
				m.login.input.InsertString(msg.Content)
			}
		case m.overlay != nil:
		default:
			if img, name, ok := pastedImage(msg.Content, m.sess.Cwd()); ok {
				// A pasted (or dropped) image file is attached.
				m.images = append(m.images, img)
				m.imageNames = append(m.imageNames, name)
				return m, nil
			}
			m.editor.InsertString(msg.Content)
			m.updateMenu()
		}
		return m, nil
	case tea.KeyPressMsg:
		cmd := m.key(msg)
		return m, tea.Batch(cmd, m.flushInline())
	}
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(msg)
	return m, cmd
}

func (m *Model) scrollBy(d int) {
	m.scroll = max(0, m.scroll+d)
}

// apply folds one core event into the transcript.
func (m *Model) apply(ev rpc.Event) tea.Cmd {
	switch ev := ev.(type) {
	case *rpc.AgentStartEvent:
		m.streaming = true
		m.scroll = 0
		return m.startSpinner()
	case *rpc.AgentSettledEvent:
		m.streaming = false
		m.cur = nil
		m.ctxUsage = m.sess.ContextUsage()
	case *rpc.MessageStartEvent:
		switch msg := ev.Message.(type) {
		case *ai.AssistantMessage:
			b := &block{kind: kindAssistant, content: append([]ai.Content(nil), msg.Content...)}
			m.cur = b
			m.addBlock(b)
		case *ai.UserMessage:
			m.addBlock(&block{kind: kindUser, text: userText(msg.Content)})
		case *ai.CustomMessage:
			if msg.Display {
				m.info(msg.Content.PlainText())
			}
		}
	case *rpc.MessageUpdateEvent:
		if m.cur != nil {
			m.streamDelta(ev.AssistantMessageEvent)
		}
	case *rpc.MessageEndEvent:
		if msg, ok := ev.Message.(*ai.AssistantMessage); ok {
			b := m.cur
			if b == nil {
				b = &block{kind: kindAssistant}
				m.addBlock(b)
			}
			b.content, b.stopReason, b.errorMessage = msg.Content, msg.StopReason, msg.ErrorMessage
			b.invalidate()
			for _, c := range msg.Content {
				if c.Type == ai.ContentToolCall {
					t := m.toolBlock(c.ID, c.Name)
					t.args = c.Arguments
					t.invalidate()
				}
			}
			m.usage.Add(msg.Usage)
			m.cost += msg.Usage.Cost.Total
			m.cur = nil
		}
	case *rpc.ToolExecutionStartEvent:
		t := m.toolBlock(ev.ToolCallID, ev.ToolName)
		if len(ev.Args) > 0 {
			t.args = ev.Args
		}
		t.invalidate()
	case *rpc.ToolExecutionUpdateEvent:
		t := m.toolBlock(ev.ToolCallID, ev.ToolName)
		t.output = resultText(ev.PartialResult.Content)
		t.invalidate()
	case *rpc.ToolExecutionEndEvent:
		t := m.toolBlock(ev.ToolCallID, ev.ToolName)
		t.output, t.details, t.isError, t.done, t.durationMs = resultText(ev.Result.Content), ev.Result.Details, ev.IsError, true, ev.DurationMs
		t.invalidate()
	case *rpc.QueueUpdateEvent:
		m.steering, m.followUp = ev.Steering, ev.FollowUp
	case *rpc.AutoRetryStartEvent:
		m.notify(fmt.Sprintf("Retrying (%d/%d) in %.0fs: %s", ev.Attempt, ev.MaxAttempts, float64(ev.DelayMs)/1000, ev.ErrorMessage), true)
	case *rpc.AutoRetryEndEvent:
		if !ev.Success && ev.FinalError != "" {
			m.errorBlock("Retry failed: " + ev.FinalError)
		}
		m.notice = ""
	case *rpc.CompactionStartEvent:
		m.notify("Compacting the context…", false)
	case *rpc.CompactionEndEvent:
		switch {
		case ev.ErrorMessage != "":
			m.errorBlock("Compaction failed: " + ev.ErrorMessage)
		case ev.Aborted:
			m.info("Compaction aborted")
		default:
			m.reload()
			m.info("Context compacted")
		}
		m.notice = ""
	case *rpc.SessionChangedEvent:
		m.reload()
	case *rpc.BashExecutionUpdateEvent:
		if b := m.bashes[ev.ID]; b != nil {
			b.output += ev.Delta
			b.invalidate()
		}
	case *rpc.NotifyEvent:
		// The core's own notices (MCP servers that failed to start):
		// once, in the transcript.
		switch ev.NotifyType {
		case "error":
			m.errorBlock(ev.Message)
		case "warning":
			m.addBlock(&block{kind: kindWarning, text: ev.Message})
		default:
			m.info(ev.Message)
		}
	case *rpc.MCPServerChangedEvent:
		if m.overlay != nil && m.overlay.refresh != nil {
			m.overlay.refresh(m)
		}
	case *rpc.ExtensionErrorEvent:
		m.errorBlock(fmt.Sprintf("Extension %s (%s): %s", filepath.Base(ev.ExtensionPath), ev.Event, ev.Error))
	case *rpc.ThinkingLevelChangedEvent, *rpc.SessionInfoChangedEvent:
		// The footer reads them from the session.
	}
	return nil
}

// toolBlock returns the block of a tool call, adding it when new.
func (m *Model) toolBlock(id, name string) *block {
	if b := m.tools[id]; b != nil {
		if b.toolName == "" {
			b.toolName = name
		}
		return b
	}
	b := &block{kind: kindTool, callID: id, toolName: name}
	m.tools[id] = b
	m.addBlock(b)
	return b
}

// streamDelta applies one streaming step to the current assistant block.
func (m *Model) streamDelta(e ai.AssistantEvent) {
	b := m.cur
	grow := func(i int) {
		for len(b.content) <= i {
			b.content = append(b.content, ai.Content{})
		}
	}
	switch e.Type {
	case "text_start":
		grow(e.ContentIndex)
		b.content[e.ContentIndex] = ai.Content{Type: ai.ContentText}
	case "text_delta":
		grow(e.ContentIndex)
		b.content[e.ContentIndex].Type = ai.ContentText
		b.content[e.ContentIndex].Text += e.Delta
	case "text_end":
		grow(e.ContentIndex)
		b.content[e.ContentIndex].Type = ai.ContentText
		b.content[e.ContentIndex].Text = e.Content
	case "thinking_start":
		grow(e.ContentIndex)
		b.content[e.ContentIndex] = ai.Content{Type: ai.ContentThinking}
	case "thinking_delta":
		grow(e.ContentIndex)
		b.content[e.ContentIndex].Type = ai.ContentThinking
		b.content[e.ContentIndex].Thinking += e.Delta
	case "thinking_end":
		grow(e.ContentIndex)
		b.content[e.ContentIndex].Type = ai.ContentThinking
		b.content[e.ContentIndex].Thinking = e.Content
	case "toolcall_start":
		grow(e.ContentIndex)
		b.content[e.ContentIndex] = ai.Content{Type: ai.ContentToolCall, ID: e.ID, Name: e.ToolName}
		m.toolBlock(e.ID, e.ToolName)
	case "toolcall_end":
		if e.ToolCall != nil {
			grow(e.ContentIndex)
			b.content[e.ContentIndex] = *e.ToolCall
			t := m.toolBlock(e.ToolCall.ID, e.ToolCall.Name)
			t.args = e.ToolCall.Arguments
			t.invalidate()
		}
	default:
		return
	}
	b.invalidate()
}

// flushInline writes the finished blocks to the scrollback (inline mode).
func (m *Model) flushInline() tea.Cmd {
	if !m.opts.Inline {
		return nil
	}
	var lines []string
	for m.printed < len(m.blocks) {
		b := m.blocks[m.printed]
		if !m.finished(b) {
			break
		}
		if bl := b.render(m.width, m.th, m.expanded, m.showThinking); len(bl) > 0 {
			lines = append(lines, "")
			lines = append(lines, bl...)
		}
		m.printed++
	}
	if len(lines) == 0 {
		return nil
	}
	if !m.started {
		// The start header leaves the frame with the first blocks.
		m.started = true
		lines = append(m.header(), lines...)
	}
	// The blocks leave the frame now and are written above it once the
	// smaller frame is drawn: the renderer inserts lines above the frame
	// it last drew, and a frame that shrinks in the same step leaves
	// pieces of itself behind.
	m.toPrint = append(m.toPrint, lines...)
	return tea.Tick(3*frameInterval, func(time.Time) tea.Msg { return printMsg{} })
}

// printMsg writes the blocks waiting for the scrollback.
type printMsg struct{}

// finished reports whether a block will not change any more.
func (m *Model) finished(b *block) bool {
	switch b.kind {
	case kindAssistant:
		return b != m.cur
	case kindTool, kindBash:
		return b.done
	}
	return true
}

// status is the line under the transcript: the spinner, a notice.
func (m *Model) statusLines() []string {
	var out []string
	if m.streaming {
		frame := spinFrames[m.spin%len(spinFrames)]
		out = append(out, m.th.Accent.Render(frame)+" "+m.th.Dim.Render("Working… ("+keyText(m.keys.keyOf(actInterrupt))+" to interrupt)"))
	}
	for _, s := range m.steering {
		out = append(out, ansi.Truncate(m.th.Dim.Render("Steering: ")+firstLine(s), m.width, "…"))
	}
	for _, s := range m.followUp {
		out = append(out, ansi.Truncate(m.th.Dim.Render("Follow-up: ")+firstLine(s), m.width, "…"))
	}
	if len(m.steering)+len(m.followUp) > 0 {
		out = append(out, m.th.Dim.Render("↳ "+keyText(m.keys.keyOf(actDequeue))+" to edit all queued messages"))
	}
	if len(m.imageNames) > 0 {
		out = append(out, ansi.Truncate(m.th.Accent.Render("Attached: ")+strings.Join(m.imageNames, ", ")+m.th.Dim.Render(" (sent with the next message; "+keyText(m.keys.keyOf(actClear))+" removes)"), m.width, "…"))
	}
	out = append(out, m.extensionLines()...)
	if m.notice != "" {
		st := m.th.Dim
		if m.noticeErr {
			st = m.th.Error
		}
		out = append(out, wrap(st.Render(m.notice), m.width)...)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// header is the start header: name, version and the key hints.
func (m *Model) header() []string {
	k := m.keys
	hint := fmt.Sprintf("%s interrupt · %s/%s clear/exit · / commands · ! bash · %s more",
		keyText(k.keyOf(actInterrupt)), keyText(k.keyOf(actClear)), keyText(k.keyOf(actExit)), keyText(k.keyOf(actExpandTools)))
	return []string{
		m.th.Accent.Bold(true).Render("pisces") + m.th.Dim.Render(" v"+m.opts.Version),
		m.th.Dim.Render(ansi.Truncate(hint, m.width, "…")),
	}
}

// keyText spells a key as pi's hints do ("escape", "ctrl+c").
func keyText(k string) string {
	switch k {
	case "esc":
		return "escape"
	case "pgup":
		return "pageUp"
	case "pgdown":
		return "pageDown"
	}
	return k
}

// tailLines renders the transcript from its end until it has need lines
// (or all of it: complete), so that a long session costs the lines shown,
// not the whole transcript, at every frame.
func (m *Model) tailLines(need int) (lines []string, complete bool) {
	start := 0
	if m.opts.Inline {
		start = m.printed
	}
	var chunks [][]string
	n := 0
	i := len(m.blocks) - 1
	for ; i >= start && n < need; i-- {
		bl := m.blocks[i].render(m.width, m.th, m.expanded, m.showThinking)
		if len(bl) == 0 {
			continue
		}
		chunks = append(chunks, bl)
		n += len(bl) + 1
	}
	complete = i < start
	if complete && (!m.opts.Inline || !m.started) {
		lines = append(lines, m.header()...)
	}
	for j := len(chunks) - 1; j >= 0; j-- {
		lines = append(lines, "")
		lines = append(lines, chunks[j]...)
	}
	return lines, complete
}

// footer is the cwd line and the usage/model line.
func (m *Model) footer() []string {
	cwd := m.sess.Cwd()
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(cwd, home) {
		cwd = "~" + strings.TrimPrefix(cwd, home)
	}
	// Not State(): it counts the session's messages, too much for every
	// frame of a long session.
	if name := m.sess.Store().Name(); name != "" {
		cwd += " • " + name
	}
	var parts []string
	u := m.usage
	if u.Input > 0 {
		parts = append(parts, "↑"+tokens(u.Input))
	}
	if u.Output > 0 {
		parts = append(parts, "↓"+tokens(u.Output))
	}
	if u.CacheRead > 0 {
		parts = append(parts, "R"+tokens(u.CacheRead))
	}
	if u.CacheWrite > 0 {
		parts = append(parts, "W"+tokens(u.CacheWrite))
	}
	if m.cost > 0 {
		parts = append(parts, fmt.Sprintf("$%.3f", m.cost))
	}
	cu := m.ctxUsage
	if cu.ContextWindow > 0 {
		pct := "?"
		if cu.Known {
			pct = fmt.Sprintf("%.1f%%", cu.Percent)
		}
		parts = append(parts, pct+"/"+tokens(int64(cu.ContextWindow)))
	}
	left := strings.Join(parts, " ")
	right := "no model"
	if model := m.sess.Model(); model != nil {
		right = "(" + model.Provider + ") " + model.ID
		if level := m.sess.ThinkingLevel(); model.Reasoning && level != "" {
			right += " • " + level
		}
	}
	pad := m.width - ansi.StringWidth(left) - ansi.StringWidth(right)
	line2 := left + strings.Repeat(" ", max(1, pad)) + right
	return []string{
		m.th.Dim.Render(ansi.Truncate(cwd, m.width, "…")),
		m.th.Dim.Render(ansi.Truncate(line2, m.width, "…")),
	}
}

// tokens writes a count as pi does: 950, 1.2k, 34k, 1.5M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1000000:
		return fmt.Sprintf("%dk", n/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// View draws the screen: transcript, status, the editor between two rules
// (or a selector in its place), the slash menu, the footer.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	rule := m.th.Muted.Render(strings.Repeat("─", m.width))
	var middle []string
	cursorRow := -1
	switch {
	case m.login != nil:
		middle = append(middle, rule)
		lines, row := m.login.render(m.width, m.th)
		if row >= 0 {
			cursorRow = len(middle) + row
		}
		middle = append(middle, lines...)
		middle = append(middle, rule)
	case m.dialog != nil:
		middle = append(middle, rule)
		lines, row := m.dialog.render(m.width, m.th)
		if row >= 0 {
			cursorRow = len(middle) + row
		}
		middle = append(middle, lines...)
		middle = append(middle, rule)
	case m.overlay != nil:
		middle = append(middle, rule)
		middle = append(middle, m.overlay.render(m.width, m.th)...)
		middle = append(middle, rule)
	default:
		middle = append(middle, rule)
		cursorRow = len(middle)
		middle = append(middle, strings.Split(m.editor.View(), "\n")...)
		middle = append(middle, rule)
		if m.menu != nil {
			middle = append(middle, m.menu.render(m.width, m.th)...)
		}
	}
	status := m.statusLines()
	bottom := append(status, middle...)
	if cursorRow >= 0 {
		cursorRow += len(status)
	}
	bottom = append(bottom, m.footer()...)

	avail := m.height - len(bottom)
	if m.opts.Inline {
		avail = max(0, m.height/2-len(bottom))
	}
	if avail < 0 {
		avail = 0
	}
	lines, complete := m.tailLines(avail + m.scroll)
	if complete {
		m.scroll = min(m.scroll, max(0, len(lines)-avail))
	}
	end := max(0, len(lines)-m.scroll)
	start := max(0, end-avail)
	shown := lines[start:end]
	all := append(append([]string{}, shown...), bottom...)
	v := tea.NewView(strings.Join(all, "\n"))
	if m.title != "" {
		v.WindowTitle = m.title
	}
	if !m.opts.Inline {
		v.AltScreen = true
		v.MouseMode = tea.MouseModeCellMotion
	}
	if cursorRow >= 0 {
		ed := &m.editor
		switch {
		case m.login != nil:
			ed = &m.login.input
		case m.dialog != nil:
			ed = &m.dialog.input
		}
		if c := ed.Cursor(); c != nil {
			c.Y += len(shown) + cursorRow
			v.Cursor = c
		}
	}
	return v
}

// Transcript renders the whole transcript at width without colours of
// the UI's own (what is printed on the main screen at exit).
func (m *Model) Transcript(width int) string {
	var out []string
	for _, b := range m.blocks {
		lines := b.render(width, m.th, m.expanded, m.showThinking)
		if len(lines) == 0 {
			continue
		}
		out = append(out, "")
		out = append(out, lines...)
	}
	return strings.Join(out, "\n")
}

// SessionID is the id of the session shown.
func (m *Model) SessionID() string { return m.sess.Store().ID() }

// InMemory reports whether the session shown is not saved.
func (m *Model) InMemory() bool { return m.sess.InMemory() }

// Close stops following events (and a login in progress).
func (m *Model) Close() {
	if m.feed != nil {
		m.feed.close()
	}
	if m.login != nil {
		m.login.cancel()
	}
}
