// Package core owns a running session: the agent loop, the tool set, the
// queues, the model and thinking level, the settings, retry and persistence.
// Every mode (print, json, RPC, and later WebSocket and ACP) is a thin
// adapter over a *Session. The core knows nothing of stdin or JSON lines: it
// publishes rpc.Event values to its subscribers.
package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/prompt"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// Queue modes.
const (
	QueueOneAtATime = "one-at-a-time"
	QueueAll        = "all"
)

// Prompt dispositions (pi 1.5).
const (
	DispositionStarted = "started"
	DispositionQueued  = "queued"
	DispositionHandled = "handled"
)

// Streaming behaviours of a prompt sent while a run is going on.
const (
	BehaviorSteer    = "steer"
	BehaviorFollowUp = "followUp"
)

// Errors the core returns to callers; transports show their text.
var (
	ErrBusy       = errors.New("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
	ErrNoModel    = errors.New("No model selected. Use --model or set_model to choose one.")
	ErrCompacting = errors.New("Cannot submit a prompt while compaction is in progress")
)

// Options configure a new core session.
type Options struct {
	AgentDir string
	Cwd      string
	Settings *settings.Settings
	Models   *models.Registry
	Store    *session.Session
	// SessionDir is a configured folder for every project's new session
	// files (--session-dir, the environment or settings); "" puts each
	// session in the folder of its own cwd under <agentDir>/sessions, which
	// follows a switch to another project. InMemory keeps new sessions in
	// memory.
	SessionDir string
	InMemory   bool

	Model         *ai.Model
	ThinkingLevel string
	// PreferStored makes the model and thinking level recorded in a
	// resumed store win over Model and ThinkingLevel, which are then only
	// the fallback (a session a surface opens beside others: its own
	// settings come back, as switch_session restores them).
	PreferStored bool
	// ScopedModels limit cycle_model (--models); empty = all available.
	ScopedModels []*ai.Model

	Tools []tools.Tool // every tool that can be activated
	// ToolsFor builds the tools for another working directory (used when a
	// session of another project is opened); nil keeps Tools.
	ToolsFor func(cwd string) []tools.Tool

	// ActiveTools names the active tools. nil means DefaultActiveTools()
	// plus every extension tool; otherwise it is the whole active set, and
	// an extension tool is active only when named.
	ActiveTools []string
	// AllowedTools is the session's tool policy: the names --tools,
	// --no-tools, --exclude-tools and the settings' defaultTools allow (nil:
	// no limit). A subagent gets a tool only when the policy allows it or
	// the session has it active, whatever its agent definition declares.
	AllowedTools []string

	SystemPrompt       string   // --system-prompt
	AppendSystemPrompt []string // --append-system-prompt
	NoContextFiles     bool
	// SkillPaths and PromptPaths are skills and prompt templates given for
	// this run (--skill, --prompt-template): files or directories, absolute.
	// NoSkills and NoPromptTemplates (--no-skills, --no-prompt-templates)
	// leave out the ones found in the agent dir and the project.
	SkillPaths        []string
	PromptPaths       []string
	NoSkills          bool
	NoPromptTemplates bool
	// Trusted is the trust decision for Cwd: it loads the project's own
	// resources (.pisces/ settings, prompts, skills, rules, agents,
	// SYSTEM.md, APPEND_SYSTEM.md).
	Trusted bool
	// Trust decides for the directories the session moves to later (a
	// session of another project is opened); nil: a decider of AgentDir
	// without flags (remembered answers; a question needs SetTrustAsk).
	Trust *resources.TrustDecider
	// Extensions are the loaded extensions (nil: none).
	Extensions *extensions.Host
	// MCP is the session's view of the MCP servers (nil: none). Their
	// tools join the tool set as the servers connect.
	MCP    *mcp.Session
	APIKey string // --api-key override for the current provider

	// Spills records the bash spill files of this session's tools (whoever
	// builds them should put it in their tools.Env) and of its user bash
	// commands; they are deleted when the session closes. nil: the session
	// makes its own, for its user bash commands.
	Spills *tools.SpillFiles

	// LegacyWire selects the older wire's message_update snapshots.
	LegacyWire bool
	// Log receives diagnostics (never stdout). Default os.Stderr.
	Log io.Writer
	// Now is the clock (tests pin it).
	Now func() time.Time

	isSubagent   bool   // a task item's session
	taskIDPrefix string // prefix of nested task items' ids
}

// Session is the core: one running conversation.
type Session struct {
	opts Options
	log  io.Writer
	// snapshotViewers counts the subscribers that want message_update
	// snapshots (oh-my-pi's wire); see WantSnapshots.
	snapshotViewers atomic.Int32
	// persistFailing: the last write of a run's message to the session
	// file failed (a notice was sent).
	persistFailing atomic.Bool

	mu             sync.Mutex
	cwd            string
	trusted        bool
	trustAsk       resources.TrustAsk
	resources      *resources.Set
	taskTool       *task.Tool
	hostTools      []tools.Tool
	todos          *task.TodoList
	budget         *task.Controller
	tools          []tools.Tool
	store          *session.Session
	model          *ai.Model
	thinking       string
	fastMode       bool // set_fast_mode: priority processing where the model has it
	active         []string
	steering       []*queued
	followUp       []*queued
	steeringMode   string
	followUpMode   string
	interruptMode  string
	autoCompact    bool
	autoRetry      bool
	compacting     int
	compactCancels []context.CancelFunc
	compactIdle    *sync.Cond // on mu: broadcast when compacting drops to 0
	run            *runState
	retryCancel    context.CancelFunc
	pendingBash    []*ai.BashExecutionMessage
	bash           *bashState
	closed         bool
	mcpOnce        sync.Once
	mcpStop        func()

	promptMu     sync.Mutex
	shutdown     chan struct{}
	shutdownOnce sync.Once

	emitMu  sync.Mutex
	subs    map[int]func(rpc.Event)
	pacers  map[int]func(context.Context)
	nextSub int
	// paceList is pacers as a slice, replaced on every change: read
	// without a lock after every event of a run.
	paceList atomic.Pointer[[]func(context.Context)]
}

type queued struct {
	msg  *ai.UserMessage
	text string
}

// New creates the core over an open session store.
func New(opts Options) (*Session, error) {
	if opts.Store == nil {
		return nil, errors.New("core: no session store")
	}
	if opts.Models == nil {
		opts.Models = models.NewRegistry()
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Spills == nil {
		opts.Spills = &tools.SpillFiles{}
	}
	if opts.Settings == nil {
		st, err := settings.Load(opts.AgentDir, opts.Cwd)
		if err != nil {
			return nil, err
		}
		opts.Settings = st
	}
	if opts.Trust == nil {
		opts.Trust = resources.NewTrustDecider(opts.AgentDir, nil, "")
	}
	active := opts.ActiveTools
	extActive := active == nil
	if active == nil {
		active = DefaultActiveTools()
	}
	st := opts.Settings
	s := &Session{
		opts:          opts,
		log:           opts.Log,
		cwd:           opts.Cwd,
		trusted:       opts.Trusted,
		tools:         opts.Tools,
		store:         opts.Store,
		model:         opts.Model,
		active:        active,
		steeringMode:  st.SteeringMode(),
		followUpMode:  st.FollowUpMode(),
		interruptMode: st.InterruptMode(), // then the session's own (initStore)
		autoCompact:   st.CompactionEnabled(),
		autoRetry:     st.RetryEnabled(),
		subs:          map[int]func(rpc.Event){},
		pacers:        map[int]func(context.Context){},
		shutdown:      make(chan struct{}),
	}
	level := opts.ThinkingLevel
	if level == "" {
		level = st.DefaultThinkingLevel()
	}
	s.thinking = models.Clamp(s.model, level)
	s.setupTask()
	s.tools = s.withTaskTools(opts.Tools)
	if ext := s.extensionTools(s.tools); len(ext) > 0 {
		s.tools = append(s.tools, ext...)
		if extActive {
			for _, t := range ext {
				s.active = append(s.active, t.Name())
			}
		}
	}
	s.loadResources()
	if err := s.initStore(); err != nil {
		return nil, err
	}
	return s, nil
}

// initStore records the model and thinking level of a fresh session, or
// restores them from a resumed one, as pi does; a resumed session's
// interrupt mode comes back too.
func (s *Session) initStore() error {
	if m, ok := storedInterruptMode(s.store); ok {
		s.interruptMode = m
	}
	ctx := s.store.BuildContext()
	hasMessages := len(ctx.Messages) > 0
	if !hasMessages {
		if s.model != nil {
			if _, err := s.store.AppendModelChange(s.model.Provider, s.model.ID); err != nil {
				return err
			}
		}
		_, err := s.store.AppendThinkingLevelChange(s.thinking)
		return err
	}
	if (s.opts.Model == nil || s.opts.PreferStored) && ctx.Provider != "" {
		if m, ok := s.opts.Models.Find(ctx.Provider, ctx.ModelID); ok {
			if _, ok := s.opts.Models.Key(m.Provider); ok {
				s.model = m
			}
		}
	}
	if (s.opts.ThinkingLevel == "" || s.opts.PreferStored) && s.hasThinkingEntry() {
		s.thinking = models.Clamp(s.model, ctx.ThinkingLevel)
	} else {
		s.thinking = models.Clamp(s.model, s.thinking)
		if _, err := s.store.AppendThinkingLevelChange(s.thinking); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) hasThinkingEntry() bool {
	for _, e := range s.store.Entries() {
		if e.Type == "thinking_level_change" {
			return true
		}
	}
	return false
}

// WantSnapshots tells the session that one more (on) or one fewer
// subscriber wants message_update events to carry the message as it stands
// (Partial): oh-my-pi's wire sends it in every update. The snapshots cost a
// copy of the message per update, so they are made only while someone
// wants them (or always with Options.LegacyWire), from the next run.
func (s *Session) WantSnapshots(on bool) {
	if on {
		s.snapshotViewers.Add(1)
	} else {
		s.snapshotViewers.Add(-1)
	}
}

// SnapshotViewers is the number of subscribers that want message_update
// snapshots (WantSnapshots).
func (s *Session) SnapshotViewers() int { return int(s.snapshotViewers.Load()) }

// Subscribe registers fn for every event. fn is called synchronously, in
// event order, from whichever goroutine emits; it must not block and must
// not call back into the Session. It returns a function that unsubscribes.
func (s *Session) Subscribe(fn func(rpc.Event)) func() {
	s.emitMu.Lock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = fn
	s.emitMu.Unlock()
	return func() {
		s.emitMu.Lock()
		delete(s.subs, id)
		s.emitMu.Unlock()
	}
}

// Pace registers wait, which lets a subscriber that queues events hold
// back the streams that produce most of them: the run (model output, tool
// updates) and the user bash command call every registered wait after each
// of their events, with their own context and holding no lock. wait returns
// when its subscriber has room again or the context is done (an abort
// cancels the run's context, so a waiting run still stops at once). It
// returns a function that unregisters wait.
func (s *Session) Pace(wait func(context.Context)) func() {
	s.emitMu.Lock()
	id := s.nextSub
	s.nextSub++
	s.pacers[id] = wait
	s.publishPacersLocked()
	s.emitMu.Unlock()
	return func() {
		s.emitMu.Lock()
		delete(s.pacers, id)
		s.publishPacersLocked()
		s.emitMu.Unlock()
	}
}

func (s *Session) publishPacersLocked() {
	list := make([]func(context.Context), 0, len(s.pacers))
	for _, w := range s.pacers {
		list = append(list, w)
	}
	s.paceList.Store(&list)
}

// pace calls the registered pacers (see Pace). It must be called with no
// lock held.
func (s *Session) pace(ctx context.Context) {
	if list := s.paceList.Load(); list != nil {
		for _, w := range *list {
			w(ctx)
		}
	}
}

// emit publishes an event to every subscriber. It must not be called with
// s.mu held.
func (s *Session) emit(ev rpc.Event) {
	rpc.SetType(ev)
	s.mu.Lock()
	b := s.budget
	s.mu.Unlock()
	b.Observe(ev)
	s.emitMu.Lock()
	for _, fn := range s.subs {
		fn(ev)
	}
	s.emitMu.Unlock()
	if s.opts.Extensions != nil {
		s.opts.Extensions.Event(ev)
	}
}

func (s *Session) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "pisces: "+format+"\n", args...)
}

// Store returns the current session store.
func (s *Session) Store() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store
}

// Model returns the current model (nil when none).
func (s *Session) Model() *ai.Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// ThinkingLevel returns the current thinking level.
func (s *Session) ThinkingLevel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.thinking
}

// Cwd returns the working directory of the session's project.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// Models returns the model registry.
func (s *Session) Models() *models.Registry { return s.opts.Models }

// Settings returns the settings.
func (s *Session) Settings() *settings.Settings { return s.opts.Settings }

// activeTools returns the active tool instances in tool order.
func (s *Session) activeTools() []tools.Tool {
	own, all := s.activeOwnTools()
	return s.withHooks(append(own, s.activeMCPTools(all)...))
}

// activeOwnTools returns the session's own active tools (not MCP's), and
// all of its own.
func (s *Session) activeOwnTools() (active, all []tools.Tool) {
	s.mu.Lock()
	on := map[string]bool{}
	for _, n := range s.active {
		on[n] = true
	}
	all = s.tools
	s.mu.Unlock()
	for _, t := range all {
		if on[t.Name()] {
			active = append(active, t)
		}
	}
	return active, all
}

// activeMCPTools returns the MCP tools active now (own: the session's
// own tools, whose names MCP tools do not take).
func (s *Session) activeMCPTools(own []tools.Tool) []tools.Tool {
	var out []tools.Tool
	for _, e := range s.mcpEntries(own) {
		if e.Active {
			out = append(out, e.Tool)
		}
	}
	return out
}

// systemPrompt builds the system prompt for the active tools and its
// sections (for pi 1.5's system message).
func (s *Session) systemPrompt(active []tools.Tool) (string, []prompt.Section) {
	infos := make([]prompt.ToolInfo, 0, len(active))
	for _, t := range active {
		infos = append(infos, prompt.ToolInfo{Name: t.Name(), Description: t.Description()})
	}
	cwd := s.Cwd()
	var files []prompt.ContextFile
	if !s.opts.NoContextFiles {
		files = prompt.LoadContextFiles(s.opts.AgentDir, cwd)
	}
	return prompt.Build(prompt.Options{
		Cwd:            cwd,
		AgentDir:       s.opts.AgentDir,
		ProjectTrusted: s.Trusted(),
		Tools:          infos,
		CustomPrompt:   s.opts.SystemPrompt,
		AppendPrompt:   s.opts.AppendSystemPrompt,
		ContextFiles:   files,
		Now:            s.opts.Now(),
		NoContextFiles: s.opts.NoContextFiles,
		Extra:          append(s.resourceSections(), s.mcpSection()...),
	})
}

// Close aborts any work and closes the session store.
func (s *Session) Close() error {
	s.Abort()
	s.AbortBash()
	s.opts.Spills.RemoveAll()
	s.mu.Lock()
	s.closed = true
	st := s.store
	stop := s.mcpStop
	s.mcpStop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	return st.Close()
}
