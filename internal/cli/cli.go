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
	"syscall"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/ai/scripted"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/fsx"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/internal/tools"
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
}

// Main runs Pisces and returns the exit code.
func Main(argv []string, stdio IO) int {
	a, err := ParseArgs(argv)
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
	if a.ListModels {
		return listModels(env.registry, a.ListModelsSearch, a.ListModelsAll, stdio.Stdout)
	}
	sess, err := env.newCore()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	defer sess.Close()
	defer env.closeExtensions()
	if a.Name != "" {
		if err := sess.SetSessionName(a.Name); err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces: --name: %v\n", err)
			return 2
		}
	}
	switch a.Mode {
	case "rpc":
		return runRPC(sess, env, stdio)
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
	model    *ai.Model
	thinking string
	scoped   []*ai.Model
	tools    []tools.Tool
	toolsFor func(cwd string) []tools.Tool
	// Project trust: trust decides per directory; trusted is its decision
	// for cwd (loads the project's .pisces/ resources).
	trust   *resources.TrustDecider
	trusted bool

	extensions *extensions.Host
	active     []string
	allowed    []string // the tool policy (see core.Options.AllowedTools)
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

func setup(a *Args, stdio IO) (*environment, error) {
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

	reg, errs := models.Load(models.LoadOptions{
		AgentDir:         env.agentDir,
		APIKeyOverride:   a.APIKey,
		OverrideProvider: a.Provider,
		Providers:        adapterFor,
		Offline:          a.Offline,
	})
	for _, e := range errs {
		if a.Verbose || !isMissingAdapter(e) {
			fmt.Fprintf(stdio.Stderr, "pisces: %v\n", e)
		}
	}
	env.registry = reg
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
	if env.model == nil && a.Session == "" && !a.Continue {
		for _, name := range defaultProviders {
			if p, ok := env.registry.Provider(name); ok && len(p.Models) > 0 {
				if _, ok := env.registry.Key(name); ok {
					env.model = p.Models[0]
					break
				}
			}
		}
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
	env.toolsFor = func(dir string) []tools.Tool {
		return tools.All(tools.Env{Cwd: dir, ShellPath: st.ShellPath(), ShellCommandPrefix: st.ShellCommandPrefix(), AgentDir: env.agentDir})
	}
	env.tools = env.toolsFor(cwd)
	// The core adds the task and todo_write tools to these.
	known := map[string]bool{task.Name: true, task.TodoWriteName: true}
	for _, t := range env.tools {
		known[t.Name()] = true
	}
	// The same lists, applied to every tool rather than the default set,
	// give the session's tool policy: what subagents may be given.
	active := core.DefaultActiveTools()
	allowed := append(toolNames(env.tools), task.Name, task.TodoWriteName)
	if d := st.DefaultTools(); len(d) > 0 {
		active = applyToolList(active, d)
		allowed = applyToolList(allowed, d)
	}
	if a.ToolsSet {
		active = applyToolList(active, a.Tools)
		allowed = applyToolList(allowed, a.Tools)
	}
	if a.NoTools || a.NoBuiltinTools {
		active, allowed = []string{}, []string{}
	}
	for _, x := range a.ExcludeTools {
		active = remove(active, x)
		allowed = remove(allowed, x)
	}
	for _, n := range active {
		if !known[n] {
			return nil, usagef("Unknown tool %q (available: %s, %s, %s)", n, strings.Join(toolNames(env.tools), ", "), task.Name, task.TodoWriteName)
		}
	}
	env.active = active
	env.allowed = allowed
	return env, nil
}

// applyToolList applies a --tools list: plain names replace the set; a list
// made only of +name/-name entries modifies it.
func applyToolList(cur []string, list []string) []string {
	modifiers := true
	for _, x := range list {
		if !strings.HasPrefix(x, "+") && !strings.HasPrefix(x, "-") {
			modifiers = false
		}
	}
	if !modifiers {
		out := []string{}
		for _, x := range list {
			out = append(out, strings.TrimLeft(x, "+"))
		}
		return out
	}
	out := append([]string(nil), cur...)
	for _, x := range list {
		name := x[1:]
		out = remove(out, name)
		if x[0] == '+' {
			out = append(out, name)
		}
	}
	return out
}

func remove(list []string, name string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != name {
			out = append(out, x)
		}
	}
	return out
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
	case a.Session != "":
		path, err := session.Resolve(env.agentDir, env.cwd, a.SessionDir, a.Session)
		if err != nil {
			return nil, err
		}
		st, rep, err := session.Open(path)
		if err == nil && rep.Skipped > 0 {
			fmt.Fprintf(env.stdio.Stderr, "pisces: %s: skipped %d unreadable line(s)\n", path, rep.Skipped)
		}
		return st, err
	case a.Continue:
		path, err := session.MostRecent(dir)
		if err == nil && path != "" {
			st, _, err := session.Open(path)
			return st, err
		}
	}
	return session.New(session.Options{Dir: dir, Cwd: env.cwd, ID: a.SessionID})
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
	sessDir, err := env.customSessionDir()
	if err != nil {
		return nil, err
	}
	store, err := env.openStore()
	if err != nil {
		return nil, err
	}
	env.loadExtensions()
	sess, err := core.New(core.Options{
		AgentDir:           env.agentDir,
		Cwd:                env.cwd,
		Settings:           env.settings,
		Models:             env.registry,
		Store:              store,
		SessionDir:         sessDir,
		InMemory:           env.args.NoSession,
		Model:              env.model,
		ThinkingLevel:      env.thinking,
		ScopedModels:       env.scoped,
		Tools:              env.tools,
		ToolsFor:           env.toolsFor,
		ActiveTools:        env.active,
		AllowedTools:       env.allowed,
		SystemPrompt:       env.args.SystemPrompt,
		AppendSystemPrompt: env.args.AppendSystemPrompt,
		NoContextFiles:     env.args.NoContextFiles,
		Trusted:            env.trusted,
		Trust:              env.trust,
		Extensions:         env.extensions,
		APIKey:             env.args.APIKey,
		LegacyWire:         env.args.RPCCompat == "legacy",
		Log:                env.stdio.Stderr,
	})
	if err != nil {
		store.Close()
		env.closeExtensions()
		return nil, err
	}
	if env.extensions != nil {
		env.extensions.SetActions(sess.Actions())
		env.extensions.SetEmit(sess.EmitExternal)
	}
	return sess, nil
}

// signalContext is cancelled on SIGINT, SIGTERM or SIGHUP; the returned
// function reports which signal arrived (nil if none).
func signalContext() (context.Context, func() os.Signal, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var got os.Signal
	done := make(chan struct{})
	go func() {
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
// text and json modes the person at the terminal, when stdin is one. Where
// nobody can answer, the project is not trusted and stderr says so.
func (env *environment) decideTrust() {
	env.trust = resources.NewTrustDecider(env.agentDir, env.args.Approve, env.cwd)
	if d, ok := env.trust.Known(env.cwd); ok {
		env.trusted = d.Trusted
		return
	}
	if env.args.Mode == "rpc" {
		return
	}
	if env.stdio.StdinIsTTY && env.stdio.Stdin != nil && !env.args.ListModels {
		d, err := env.trust.Decide(context.Background(), env.cwd, terminalTrustAsk(env.stdio.Stdin, env.stdio.Stderr))
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

// loadExtensions starts the extensions of the agent dir, the (trusted)
// project, settings `extensions` and -e flags, unless --no-extensions.
func (env *environment) loadExtensions() {
	if env.args.NoExtensions {
		return
	}
	paths := append(append([]string(nil), env.settings.Extensions()...), env.args.Extensions...)
	host, errs := extensions.Load(extensions.Options{
		AgentDir:       env.agentDir,
		Cwd:            env.cwd,
		Paths:          paths,
		ProjectTrusted: env.trusted,
		Log:            env.stdio.Stderr,
	})
	for _, e := range errs {
		fmt.Fprintf(env.stdio.Stderr, "pisces: %v\n", e)
	}
	env.extensions = host
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
