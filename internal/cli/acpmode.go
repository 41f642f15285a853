package cli

import (
	"fmt"
	"path/filepath"

	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/sessions"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/internal/transport/acp"
)

// runACP serves the Agent Client Protocol on stdin/stdout (docs/acp.md)
// until stdin ends or a signal arrives: then the runs are aborted, the
// sessions flushed and closed, and the process exits (0 at the end of
// stdin, 128+signal otherwise).
func runACP(env *environment, stdio IO) int {
	a := env.args
	if len(a.FileArgs) > 0 || len(a.Messages) > 0 {
		fmt.Fprintln(stdio.Stderr, "pisces: messages and @file arguments are not accepted in acp mode; the editor sends the prompts")
		return 2
	}
	if a.Session != "" || a.Continue || a.Fork != "" || a.SessionID != "" || a.Name != "" {
		fmt.Fprintln(stdio.Stderr, "pisces: --session, --continue, --fork, --session-id and --name are not used in acp mode; the editor creates and opens sessions (session/new, session/load)")
		return 2
	}
	if err := env.absResourcePaths(a); err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	custom, err := env.customSessionDir()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	var srv *acp.Server
	srv = acp.New(stdio.Stdout, acp.Options{
		Sessions: sessions.Options{
			Build: func(req sessions.BuildRequest) (*sessions.Built, error) {
				id := req.Store.ID()
				return env.buildSessionWith(req, func(ts []tools.Tool) []tools.Tool { return srv.GateTools(id, ts) }, srv.EditorFiles(id), srv.EditorTerminals(id))
			},
		},
		NewStore: func(cwd string) (*session.Session, error) {
			dir := custom
			if dir == "" {
				dir = session.DirFor(env.agentDir, cwd)
			}
			return session.New(session.Options{Dir: dir, Cwd: cwd, InMemory: a.NoSession})
		},
		List:    env.allSessions,
		Models:  env.registry,
		Ready:   env.modelReady,
		Reload:  env.reloadModels,
		KeyHelp: env.keyHelp(),
		TrustNote: func(cwd string) string {
			if _, known := env.trust.Known(cwd); known {
				return ""
			}
			return fmt.Sprintf("%s has its own Pisces resources (.pisces/ and the like); they are not loaded because the project is not trusted. Start Pisces in it with --approve, or trust it from another mode, to load them.", cwd)
		},
		MCP:     env.mcp != nil,
		Version: Version,
		Log:     stdio.Stderr,
	})
	ctx, sig, stop := signalContext()
	defer stop()
	stopServe := make(chan struct{})
	served := make(chan struct{})
	watched := make(chan struct{})
	code := 0
	go func() {
		defer close(watched)
		select {
		case <-served:
		case <-ctx.Done():
			code = 143
			if s := sig(); s != nil {
				code = exitCodeFor(s)
			}
			close(stopServe)
		}
	}()
	srv.Serve(stdio.Stdin, stopServe)
	close(served)
	<-watched
	return code
}

// modelReady says why no model can be called ("" when one can).
func (env *environment) modelReady() string {
	m := env.currentModel()
	if m == nil {
		return "No model is available: no provider has an API key"
	}
	if _, ok := env.registry.Key(m.Provider); !ok && env.args.APIKey == "" {
		return fmt.Sprintf("No API key for %s", m.Provider)
	}
	return ""
}

// keyHelp tells how to give Pisces a key.
func (env *environment) keyHelp() string {
	return fmt.Sprintf("Store a provider's key in %s (pisces auth, or pi's /login) or in models.json, then sign in again: Pisces reads them again without a restart. A key in the environment the editor starts Pisces with (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, ...) needs the agent restarted",
		filepath.Join(env.agentDir, "auth.json"))
}
