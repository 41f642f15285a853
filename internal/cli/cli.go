package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/codemode"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/fsx"
	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/internal/tui"
)

// Version is the program version (set at build time with -ldflags).
var Version = "0.1.0-dev"

// IO is the process's standard streams.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdinIsTTY tells whether stdin is a terminal (a piped stdin becomes the
	// message in text and json modes).
	StdinIsTTY bool
	// StdoutIsTTY tells whether stdout is a terminal: with stdin one too,
	// and no -p or --mode, Pisces opens the interactive UI.
	StdoutIsTTY bool
}

// Main runs Pisces and returns the exit code.
func Main(argv []string, stdio IO) int {
	if codemode.IsChild() {
		// A codemode run's interpreter (started by this binary's codemode
		// tool, never by a person).
		return codemode.ChildMain(stdio.Stdin, stdio.Stdout)
	}
	if len(argv) > 0 {
		if sub := findSubcommand(argv[0]); sub != nil {
			return sub.run(argv[1:], stdio)
		}
	}
	a, err := ParseArgs(argv)
	if err == nil {
		err = checkSessionFlags(a)
	}
	if err == nil && a.Resume && (a.Mode == "rpc" || a.Mode == "web" || a.Mode == "acp") {
		err = usagef("--resume picks a session in a terminal; in %s mode use list_sessions and switch_session, or --session PATH|ID", a.Mode)
	}
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 2
	}
	switch {
	case a.Help:
		fmt.Fprint(stdio.Stdout, helpText)
		return 0
	case a.Version:
		fmt.Fprintf(stdio.Stdout, "pisces %s\n", Version)
		return 0
	case a.PrintSchema:
		return printSchema(stdio)
	}
	if len(a.Export) > 0 {
		return exportSession(a.Export, stdio)
	}
	env, err := setup(a, stdio)
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
			return 2
		}
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	// Runs last: a token refresh already sent is written before exiting.
	defer env.registry.Close()
	if a.ListModels {
		return listModels(env.registry, a.ListModelsSearch, a.ListModelsAll, stdio.Stdout)
	}
	if interactive(a, stdio) {
		return runTUI(env, stdio)
	}
	if a.Resume {
		path, code, ok := pickSession(env)
		if !ok {
			return code
		}
		a.Session, a.Resume = path, false
	}
	env.startMCP()
	defer env.closeMCP()
	if a.Mode == "web" {
		return runWeb(env, stdio)
	}
	if a.Mode == "acp" {
		return runACP(env, stdio)
	}
	sess, err := env.newCore()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		var ue *UsageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	// One writer per session file: the lock beside it (web mode takes the
	// same). A file another process writes is a read-only view in rpc
	// mode and refused in print and json modes, which would append to it.
	var fl fileLock
	readOnly, err := fl.start(sess)
	if err != nil {
		sess.Close()
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	defer func() {
		sess.Close()
		fl.release()
	}()
	defer env.closeExtensions()
	if readOnly != "" && (a.Mode != "rpc" || a.Name != "") {
		fmt.Fprintf(stdio.Stderr, "pisces: %s; continue it there, or fork it (--fork %s)\n", strings.TrimSuffix(readOnly, ": this view is read-only"), sess.Store().File())
		return 1
	}
	if a.Name != "" {
		if err := sess.SetSessionName(a.Name); err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces: --name: %v\n", err)
			return 2
		}
	}
	switch a.Mode {
	case "rpc":
		return runRPC(sess, env, stdio, &fl, readOnly)
	default:
		return runPrint(sess, a, stdio)
	}
}

// environment is everything set up from flags, settings and files.
type environment struct {
	args     *Args
	stdio    IO
	agentDir string
	cwd      string
	settings *settings.Settings
	registry *models.Registry
	// model is the model sessions start with; modelMu guards it where
	// it may change after setup (ACP's authenticate: reloadModels).
	modelMu  sync.Mutex
	model    *ai.Model
	thinking string
	scoped   []*ai.Model
	tools    []tools.Tool
	toolsFor func(cwd string) []tools.Tool
	spills   *tools.SpillFiles // bash spill files, deleted when the session closes
	// Project trust: trust decides per directory; trusted is its decision
	// for cwd (loads the project's .pisces/ resources).
	trust   *resources.TrustDecider
	trusted bool

	extensions *extensions.Host
	active     []string
	allowed    []string     // the tool policy (see core.Options.AllowedTools)
	mcp        *mcp.Manager // the MCP servers; nil with --no-mcp
}

// resolveAgentDir returns the agent dir: --agent-dir, else
// $PISCES_CODING_AGENT_DIR, else ~/.pisces/agent. A directory given
// explicitly may start with ~/ and may be relative (it then resolves
// against the working directory: the user chose it). The default needs the
// home directory; without one Pisces refuses to start rather than use a
// directory relative to the working directory, which may be a repository
// whose files would then configure and run code.
func resolveAgentDir(flag string) (string, error) {
	d, from := flag, "--agent-dir"
	if d == "" {
		d, from = os.Getenv("PISCES_CODING_AGENT_DIR"), "PISCES_CODING_AGENT_DIR"
	}
	if d == "" {
		home, err := fsx.HomeDir()
		if err != nil {
			return "", fmt.Errorf("%v; set HOME or PISCES_CODING_AGENT_DIR to an absolute path", err)
		}
		return filepath.Join(home, ".pisces", "agent"), nil
	}
	d, err := fsx.ExpandHome(d)
	if err != nil {
		return "", fmt.Errorf("%s: %v", from, err)
	}
	return filepath.Abs(d)
}

// expandHome expands a leading ~ of a path from the flags, the environment
// or the settings; without a home directory that is an error naming the
// path.
func expandHome(p string) (string, error) { return fsx.ExpandHome(p) }

// baseSetup finds the agent dir and working directory, decides project
// trust and reads the settings: all that subcommands need.
func baseSetup(a *Args, stdio IO) (*environment, error) {
	env := &environment{args: a, stdio: stdio}
	agentDir, err := resolveAgentDir(a.AgentDir)
	if err != nil {
		return nil, err
	}
	env.agentDir = agentDir
	cwd, err := syscall.Getwd() // the physical cwd, as Node's process.cwd()
	if err != nil {
		return nil, fmt.Errorf("cannot read the working directory: %w", err)
	}
	env.cwd = cwd
	env.decideTrust()
	projectDir := ""
	if env.trusted {
		projectDir = cwd
	}
	st, err := settings.Load(env.agentDir, projectDir)
	if err != nil {
		return nil, err
	}
	env.settings = st
	return env, nil
}

func setup(a *Args, stdio IO) (*environment, error) {
	env, err := baseSetup(a, stdio)
	if err != nil {
		return nil, err
	}
	st, cwd := env.settings, env.cwd
	env.registry = env.loadModels(nil)
	if store := env.registry.Auth(); store != nil {
		// Sign in with ChatGPT, run by the login command of RPC and web
		// clients, names the installation by the settings' deviceId.
		store.Options().DeviceID = deviceID(env.settings)
	}
	provider := a.Provider
	if provider == "" && a.Script != "" {
		provider = scripted.ProviderName
	}
	if provider == scripted.ProviderName || a.Script != "" {
		if a.Script == "" {
			return nil, usagef("--provider scripted needs --script FILE")
		}
		p, err := scripted.Load(a.Script)
		if err != nil {
			return nil, err
		}
		env.registry.Add(&models.ProviderEntry{Name: scripted.ProviderName, Provider: p, Models: []*ai.Model{p.Model()}, NoKey: true})
	}

	// Model: --model (with :level), else the provider's default, else the
	// settings, else the first provider with a key.
	pattern, level := a.Model, a.Thinking
	if i := strings.LastIndex(pattern, ":"); i > 0 && validLevel(pattern[i+1:]) {
		if level == "" {
			level = pattern[i+1:]
		}
		pattern = pattern[:i]
	}
	switch {
	case pattern != "":
		m, err := env.registry.Resolve(provider, pattern)
		if err != nil {
			if nf := (*models.NotFoundError)(nil); errors.As(err, &nf) {
				return nil, usagef("%v (pisces --list-models lists the models you have keys for)", err)
			}
			return nil, usagef("%v", err)
		}
		env.model = m
	case provider != "":
		p, ok := env.registry.Provider(provider)
		if !ok {
			return nil, usagef("Unknown provider %q (known: %s)", provider, strings.Join(env.registry.Providers(), ", "))
		}
		if len(p.Models) == 0 {
			return nil, usagef("--provider %s needs --model (it serves any model id)", provider)
		}
		env.model = p.Models[0]
	case st.DefaultProvider() != "" && st.DefaultModel() != "":
		if m, ok := env.registry.Find(st.DefaultProvider(), st.DefaultModel()); ok {
			env.model = m
		}
	}
	if env.model == nil && a.Session == "" && !a.Continue && !a.Resume && a.Fork == "" {
		env.model = env.firstKeyedModel()
	}
	if env.model != nil && a.APIKey != "" {
		env.registry.SetAPIKeyOverride(env.model.Provider, a.APIKey)
	}
	env.thinking = level
	for _, pat := range a.Models {
		p := pat
		if i := strings.LastIndex(p, ":"); i > 0 && validLevel(p[i+1:]) {
			p = p[:i]
		}
		ms, err := env.registry.ResolveScope(p)
		if err != nil {
			return nil, usagef("--models: %v", err)
		}
		env.scoped = append(env.scoped, ms...)
	}

	// Tools.
	env.spills = &tools.SpillFiles{}
	env.toolsFor = env.toolsWith(st, env.spills)
	env.tools = env.toolsFor(cwd)
	if msg := toolListError(st.DefaultTools()); msg != "" {
		return nil, usagef("settings defaultTools: %s", msg)
	}
	return env, nil
}

// loadModels builds the model registry: the catalogue, models.json and
// keys in pi's order; problems go to stderr. store is the auth.json store to
// use (nil: a new one).
func (env *environment) loadModels(store *auth.Store) *models.Registry {
	a := env.args
	reg, errs := models.Load(models.LoadOptions{
		AgentDir:         env.agentDir,
		APIKeyOverride:   a.APIKey,
		OverrideProvider: a.Provider,
		Providers:        adapterFor,
		Offline:          a.Offline,
		Auth:             store,
	})
	for _, e := range errs {
		if a.Verbose || !isMissingAdapter(e) {
			fmt.Fprintf(env.stdio.Stderr, "pisces: %v\n", e)
		}
	}
	return reg
}

// firstKeyedModel is the first model of the default providers whose key
// resolves (nil when none does).
func (env *environment) firstKeyedModel() *ai.Model {
	for _, name := range defaultProviders {
		if p, ok := env.registry.Provider(name); ok && len(p.Models) > 0 {
			if _, ok := env.registry.Key(name); ok {
				return p.Models[0]
			}
		}
	}
	return nil
}

// currentModel is the model new sessions start with (nil: none could be
// chosen yet).
func (env *environment) currentModel() *ai.Model {
	env.modelMu.Lock()
	defer env.modelMu.Unlock()
	return env.model
}

// reloadModels reads models.json and auth.json again, as at start (the
// environment is the process's own), so that a key the user set since is
// used; when no model could be chosen at start, one is chosen now as
// start-up does (the settings' default, else the first default provider
// with a key).
func (env *environment) reloadModels() {
	env.registry.Refresh(env.loadModels(env.registry.Auth()))
	env.modelMu.Lock()
	defer env.modelMu.Unlock()
	if env.model != nil {
		return
	}
	if dp, dm := env.settings.DefaultProvider(), env.settings.DefaultModel(); dp != "" && dm != "" {
		if m, ok := env.registry.Find(dp, dm); ok {
			if _, keyed := env.registry.Key(m.Provider); keyed {
				env.model = m
			}
		}
	}
	if env.model == nil {
		env.model = env.firstKeyedModel()
	}
}

// toolsWith builds the built-in tools for a directory with the shell
// settings of st, recording bash spill files in spills.
func (env *environment) toolsWith(st *settings.Settings, spills *tools.SpillFiles) func(dir string) []tools.Tool {
	return env.toolsWithFiles(st, spills, nil, nil)
}

// toolsWithFiles is toolsWith with the text files of read, edit and write
// served by files (nil: the disk) and bash's commands run by commands
// (nil: as children of Pisces).
func (env *environment) toolsWithFiles(st *settings.Settings, spills *tools.SpillFiles, files *tools.TextFiles, commands tools.CommandRunner) func(dir string) []tools.Tool {
	return func(dir string) []tools.Tool {
		return tools.All(tools.Env{Cwd: dir, ShellPath: st.ShellPath(), ShellCommandPrefix: st.ShellCommandPrefix(), AgentDir: env.agentDir, Spills: spills, Files: files, Commands: commands})
	}
}

// chooseTools decides the active tools once the extensions are loaded (an
// extension's tool can be named in --tools and --exclude-tools).
func (env *environment) chooseTools() error {
	active, allowed, err := env.selectTools(env.extensions, env.tools, env.settings)
	if err != nil {
		return err
	}
	env.active = active
	env.allowed = allowed
	return nil
}

// selectTools applies the tool flags and settings to the built-in tools
// and the tools of the extension host: the active set, and the session's
// tool policy (what subagents may be given).
func (env *environment) selectTools(host *extensions.Host, builtinTools []tools.Tool, st *settings.Settings) (active, allowed []string, err error) {
	a := env.args
	// The core adds the task and todo_write tools to the built-in ones.
	builtin := append(toolNames(builtinTools), task.Name, task.TodoWriteName)
	var extension []string
	for _, t := range host.Tools() {
		if !contains(builtin, t.Name()) && !contains(extension, t.Name()) {
			extension = append(extension, t.Name())
		}
	}
	c := toolChoice{
		defaults:  st.DefaultTools(),
		exclude:   a.ExcludeTools,
		noTools:   a.NoTools,
		noBuiltin: a.NoBuiltinTools,
	}
	if a.ToolsSet {
		c.list = append([]string{}, a.Tools...)
	}
	active, err = selectTools(c, builtin, extension, core.DefaultActiveTools())
	if err != nil {
		return nil, nil, err
	}
	// The same lists, applied to every tool rather than the default set,
	// give the session's tool policy: what subagents may be given.
	allowed, err = selectTools(c, builtin, extension, builtin)
	if err != nil {
		return nil, nil, err
	}
	return active, allowed, nil
}

// isMissingAdapter reports a provider skipped because its wire API has no
// adapter in this build (only shown with --verbose).
func isMissingAdapter(err error) bool {
	return strings.Contains(err.Error(), "no adapter")
}

func providerNames(r *models.Registry) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range r.All() {
		if !seen[m.Provider] {
			seen[m.Provider] = true
			out = append(out, m.Provider)
		}
	}
	if len(out) == 0 {
		out = []string{"scripted (with --script FILE)"}
	}
	return out
}

// openStore opens or creates the session store the flags ask for.
func (env *environment) openStore() (*session.Session, error) {
	a := env.args
	dir, err := env.sessionDir()
	if err != nil {
		return nil, err
	}
	switch {
	case a.NoSession:
		return session.New(session.Options{Cwd: env.cwd, InMemory: true, ID: a.SessionID})
	case a.Fork != "":
		src, err := session.Resolve(env.agentDir, env.cwd, dir, a.Fork)
		if err != nil {
			return nil, err
		}
		if a.SessionID != "" {
			if p, err := env.localSessionByID(a.SessionID); err == nil && p != "" {
				return nil, fmt.Errorf("Session already exists with id '%s': %s", a.SessionID, p)
			}
		}
		return session.ForkFrom(src, session.Options{Dir: dir, Cwd: env.cwd, ID: a.SessionID})
	case a.Session != "":
		path, err := session.Resolve(env.agentDir, env.cwd, dir, a.Session)
		if err != nil {
			return nil, err
		}
		return env.openFile(path)
	case a.Continue:
		path, err := session.MostRecentFor(dir, env.cwdFilter())
		if err == nil && path != "" {
			return env.openFile(path)
		}
	case a.SessionID != "":
		// pi's --session-id: this folder's session with that id, else a
		// new session with it.
		if p, err := env.localSessionByID(a.SessionID); err == nil && p != "" {
			return env.openFile(p)
		}
	}
	return session.New(session.Options{Dir: dir, Cwd: env.cwd, ID: a.SessionID})
}

func (env *environment) openFile(path string) (*session.Session, error) {
	st, rep, err := session.Open(path)
	if err == nil && rep.Skipped > 0 {
		fmt.Fprintf(env.stdio.Stderr, "pisces: %s: skipped %d unreadable line(s)\n", path, rep.Skipped)
	}
	return st, err
}

// checkSessionFlags refuses combinations of session flags that contradict
// each other (as pi does), naming them.
func checkSessionFlags(a *Args) error {
	conflicts := func(flag string, others map[string]bool) error {
		var names []string
		for _, n := range []string{"--session", "--continue", "--resume", "--no-session"} {
			if others[n] {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			return usagef("%s cannot be combined with %s", flag, strings.Join(names, ", "))
		}
		return nil
	}
	if a.Fork != "" {
		if err := conflicts("--fork", map[string]bool{"--session": a.Session != "", "--continue": a.Continue, "--resume": a.Resume, "--no-session": a.NoSession}); err != nil {
			return err
		}
	}
	if a.Resume {
		if err := conflicts("--resume", map[string]bool{"--session": a.Session != "", "--continue": a.Continue, "--no-session": a.NoSession}); err != nil {
			return err
		}
	}
	if a.SessionID != "" {
		if err := conflicts("--session-id", map[string]bool{"--session": a.Session != "", "--continue": a.Continue, "--resume": a.Resume}); err != nil {
			return err
		}
		if !session.ValidSessionID(a.SessionID) {
			return usagef("Invalid session id: %s", a.SessionID)
		}
	}
	return nil
}

// absPaths makes paths given on the command line absolute against the
// working directory Pisces started in (a session of another project may
// change the core's directory later).
// absResourcePaths makes --skill and --prompt-template paths absolute,
// for the modes that build sessions in other directories later.
func (env *environment) absResourcePaths(a *Args) error {
	skills, err := env.absPaths(a.Skills)
	if err != nil {
		return err
	}
	prompts, err := env.absPaths(a.PromptTemplates)
	if err != nil {
		return err
	}
	a.Skills, a.PromptTemplates = skills, prompts
	return nil
}

func (env *environment) absPaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		p, err := expandHome(p)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.cwd, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// sessionDir is the folder of the launch directory's sessions.
func (env *environment) sessionDir() (string, error) {
	d, err := env.customSessionDir()
	if d != "" || err != nil {
		return d, err
	}
	return session.DirFor(env.agentDir, env.cwd), nil
}

// customSessionDir is the session folder configured for every project
// (--session-dir, PISCES_CODING_AGENT_SESSION_DIR, settings sessionDir), or
// "" when each project's sessions live in their own folder under
// <agentDir>/sessions. A leading ~ needs the home directory.
func (env *environment) customSessionDir() (string, error) {
	if env.args.SessionDir != "" {
		d, err := expandHome(env.args.SessionDir)
		if err != nil {
			return "", fmt.Errorf("--session-dir: %v", err)
		}
		return filepath.Abs(d)
	}
	if d := os.Getenv("PISCES_CODING_AGENT_SESSION_DIR"); d != "" {
		d, err := expandHome(d)
		if err != nil {
			return "", fmt.Errorf("PISCES_CODING_AGENT_SESSION_DIR: %v", err)
		}
		return d, nil
	}
	if d := env.settings.SessionDir(); d != "" {
		d, err := expandHome(d)
		if err != nil {
			return "", fmt.Errorf("settings sessionDir: %v", err)
		}
		return d, nil
	}
	return "", nil
}

func (env *environment) newCore() (*core.Session, error) {
	env.loadExtensions()
	if err := env.chooseTools(); err != nil {
		env.closeExtensions()
		return nil, err
	}
	sessDir, err := env.customSessionDir()
	if err != nil {
		env.closeExtensions()
		return nil, err
	}
	skillPaths, err := env.absPaths(env.args.Skills)
	if err == nil {
		var promptPaths []string
		promptPaths, err = env.absPaths(env.args.PromptTemplates)
		env.args.Skills, env.args.PromptTemplates = skillPaths, promptPaths
	}
	if err != nil {
		env.closeExtensions()
		return nil, err
	}
	store, err := env.openStore()
	if err != nil {
		env.closeExtensions()
		return nil, err
	}
	ms, bind := env.mcpSession(env.cwd, env.trusted)
	sess, err := core.New(env.coreOptions(project{
		cwd: env.cwd, settings: env.settings, trusted: env.trusted, extensions: env.extensions,
		tools: env.tools, active: env.active, allowed: env.allowed, sessionDir: sessDir,
		toolsFor: env.toolsFor, spills: env.spills, mcp: ms,
	}, store))
	if err != nil {
		store.Close()
		env.closeExtensions()
		return nil, err
	}
	bind(sess)
	if env.extensions != nil {
		env.extensions.SetActions(sess.Actions())
		env.extensions.SetEmit(sess.EmitExternal)
	}
	return sess, nil
}

// project is what a core session gets from the project it works in.
type project struct {
	cwd        string
	settings   *settings.Settings
	trusted    bool
	extensions *extensions.Host
	tools      []tools.Tool
	active     []string
	allowed    []string
	sessionDir string // the configured session folder ("" per project)
	toolsFor   func(cwd string) []tools.Tool
	spills     *tools.SpillFiles
	mcp        *mcp.Session
}

// coreOptions are the options of a core session over store in project p.
func (env *environment) coreOptions(p project, store *session.Session) core.Options {
	return core.Options{
		AgentDir:           env.agentDir,
		Cwd:                p.cwd,
		Settings:           p.settings,
		Models:             env.registry,
		Store:              store,
		SessionDir:         p.sessionDir,
		InMemory:           env.args.NoSession,
		Model:              env.currentModel(),
		ThinkingLevel:      env.thinking,
		ScopedModels:       env.scoped,
		Tools:              p.tools,
		ToolsFor:           p.toolsFor,
		ActiveTools:        p.active,
		AllowedTools:       p.allowed,
		SystemPrompt:       env.args.SystemPrompt,
		AppendSystemPrompt: env.args.AppendSystemPrompt,
		NoContextFiles:     env.args.NoContextFiles,
		SkillPaths:         env.args.Skills,
		PromptPaths:        env.args.PromptTemplates,
		NoSkills:           env.args.NoSkills,
		NoPromptTemplates:  env.args.NoPromptTemplates,
		Trusted:            p.trusted,
		Trust:              env.trust,
		Extensions:         p.extensions,
		MCP:                p.mcp,
		APIKey:             env.args.APIKey,
		LegacyWire:         env.args.RPCCompat == "legacy",
		Log:                env.stdio.Stderr,
		Spills:             p.spills,
	}
}

// signalContext is cancelled on SIGINT, SIGTERM or SIGHUP; the returned
// function reports which signal arrived (nil if none).
func signalContext() (context.Context, func() os.Signal, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var got os.Signal
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case s := <-ch:
			got = s
			cancel()
		case <-done:
		}
	}()
	return ctx, func() os.Signal {
			select {
			case <-ctx.Done():
				return got
			default:
				return nil
			}
		}, func() {
			signal.Stop(ch)
			close(done)
			<-finished
			cancel()
		}
}

// exitCodeFor maps a signal to the conventional exit code.
func exitCodeFor(sig os.Signal) int {
	switch sig {
	case syscall.SIGTERM:
		return 143
	case syscall.SIGHUP:
		return 129
	default:
		return 130
	}
}

func toolNames(ts []tools.Tool) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// decideTrust decides whether the project's own resources load
// (resources.TrustDecider: --approve/--no-approve, no project resources,
// a remembered answer). Otherwise someone is asked: in rpc mode the client,
// once connected (the RPC surface installs its dialog on the session); in
// the interactive UI a screen of it, and in text and json modes a line on
// the terminal, when stdin is one. Where
// nobody can answer, the project is not trusted and stderr says so.
func (env *environment) decideTrust() {
	env.trust = resources.NewTrustDecider(env.agentDir, env.args.Approve, env.cwd)
	if d, ok := env.trust.Known(env.cwd); ok {
		env.trusted = d.Trusted
		return
	}
	if env.args.Mode == "rpc" || env.args.Mode == "web" || env.args.Mode == "acp" {
		return
	}
	if env.stdio.StdinIsTTY && env.stdio.Stdin != nil && !env.args.ListModels {
		ask := terminalTrustAsk(env.stdio.Stdin, env.stdio.Stderr)
		if interactive(env.args, env.stdio) {
			ask = env.uiTrustAsk()
		}
		d, err := env.trust.Decide(context.Background(), env.cwd, ask)
		if err != nil {
			fmt.Fprintf(env.stdio.Stderr, "pisces: cannot remember the trust decision: %v\n", err)
		}
		env.trusted = d.Trusted
		if d.Source == resources.TrustFromAnswer {
			return
		}
	}
	fmt.Fprintf(env.stdio.Stderr, "pisces: %s has project resources (.pisces/); they are not loaded until the project is trusted (--approve)\n", env.cwd)
}

// uiTrustAsk asks the trust question in a screen of the interactive UI,
// before the session it decides about is built (the settings are not read
// yet: the theme is --theme's built-in one, else dark).
func (env *environment) uiTrustAsk() resources.TrustAsk {
	th, err := tui.ThemeByName(env.args.Theme)
	if err != nil {
		th = nil
	}
	keys, _ := tui.LoadKeymap(env.agentDir) // a broken file is reported when the UI starts
	out := env.stdio.Stdout
	return tui.TrustAsker(env.stdio.Stdin, out, th, keys, Version, env.args.TUIMode == "inline")
}

// terminalTrustAsk asks the trust question on the terminal: y or yes
// trusts, n or no refuses (both remembered); anything else, or the end of
// input, is no answer (refused for this run only).
func terminalTrustAsk(in io.Reader, out io.Writer) resources.TrustAsk {
	return func(_ context.Context, project string) (bool, bool) {
		title, message := resources.TrustQuestion(project)
		fmt.Fprintf(out, "%s\n%s\nTrust it? [y/n] ", title, message)
		line, _ := bufio.NewReader(in).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, true
		case "n", "no":
			return false, true
		}
		fmt.Fprintln(out)
		return false, false
	}
}

// extensionOptions says where extensions come from: the agent dir, the
// (trusted) project, settings `extensions` and -e flags; --no-extensions
// keeps only the -e flags.
func (env *environment) extensionOptions() extensions.Options {
	return env.extensionOptionsFor(env.cwd, env.trusted, env.settings)
}

// extensionOptionsFor is extensionOptions for the project at cwd, with its
// trust decision and settings.
func (env *environment) extensionOptionsFor(cwd string, trusted bool, st *settings.Settings) extensions.Options {
	paths := append([]string(nil), env.args.Extensions...)
	if !env.args.NoExtensions {
		paths = append(append([]string(nil), st.Extensions()...), paths...)
	}
	return extensions.Options{
		AgentDir:       env.agentDir,
		Cwd:            cwd,
		Paths:          paths,
		ProjectTrusted: trusted,
		NoDiscovery:    env.args.NoExtensions,
		Log:            env.stdio.Stderr,
	}
}

// loadExtensions starts the extensions of extensionOptions.
func (env *environment) loadExtensions() {
	env.extensions = env.startExtensions(env.extensionOptions())
}

// startExtensions starts the extensions opts names (nil when there are
// none to look for), reporting those that fail on stderr.
func (env *environment) startExtensions(opts extensions.Options) *extensions.Host {
	if opts.NoDiscovery && len(opts.Paths) == 0 {
		return nil
	}
	host, errs := extensions.Load(opts)
	for _, e := range errs {
		fmt.Fprintf(env.stdio.Stderr, "pisces: %v\n", e)
	}
	return host
}

func (env *environment) closeExtensions() {
	if env.extensions != nil {
		env.extensions.Close()
		env.extensions = nil
	}
}

// exportSession is --export session.jsonl [out.html].
func exportSession(args []string, stdio IO) int {
	st, _, err := session.Open(args[0])
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: --export: %v\n", err)
		return 1
	}
	defer st.Close()
	out := strings.TrimSuffix(args[0], ".jsonl") + ".html"
	if len(args) > 1 {
		out = args[1]
	}
	path, err := core.ExportFile(st, out)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: --export: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdio.Stdout, path)
	return 0
}
