package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/sessions"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/internal/tools"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
	"github.com/pisces-agent/pisces/internal/transport/web"
	"github.com/pisces-agent/pisces/internal/webui"
)

// runWeb serves web mode until SIGINT, SIGTERM or SIGHUP (or an
// extension's request to shut down): the runs are aborted, the sessions
// flushed, the connections closed with a reason.
func runWeb(env *environment, stdio IO) int {
	a := env.args
	if len(a.FileArgs) > 0 || len(a.Messages) > 0 {
		fmt.Fprintln(stdio.Stderr, "pisces: messages and @file arguments are not accepted in web mode; send prompts from a client")
		return 2
	}
	token, err := webToken(a)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 2
	}
	loopback := web.IsLoopbackHost(a.Host)
	if !loopback {
		fmt.Fprintf(stdio.Stderr, "pisces: warning: listening on %s, beyond this machine: the traffic (the token included) is not encrypted; put a TLS reverse proxy in front (docs/web.md)\n", a.Host)
	}
	if err := env.absResourcePaths(a); err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	dir, err := env.sessionDir()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	srv, err := web.New(web.Options{
		Host:           a.Host,
		Port:           a.Port,
		Token:          token,
		NoToken:        a.WebNoToken,
		AllowedOrigins: a.AllowedOrigins,
		UIDir:          a.ServeUI,
		UI:             webui.FS(),
		Sessions: sessions.Options{
			Build: env.buildSession,
			Resolve: func(ref string) (string, error) {
				return session.Resolve(env.agentDir, env.cwd, dir, ref)
			},
		},
		RPC: rpcmode.Options{
			DeltaInterval: a.RPCDeltaInterval,
			Legacy:        a.RPCCompat == "legacy",
			OMP:           a.RPCCompat == "omp",
			Stderr:        stdio.Stderr,
		},
		Log: stdio.Stderr,
	}, func(m *sessions.Manager) (*sessions.Live, error) {
		store, err := env.openStore()
		if err != nil {
			return nil, err
		}
		l, err := m.Adopt(store)
		if err != nil {
			return nil, err
		}
		if a.Name != "" {
			if err := l.Core.SetSessionName(a.Name); err != nil {
				return nil, fmt.Errorf("--name: %v", err)
			}
		}
		return l, nil
	})
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		var ue *UsageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	// Signals are caught before the address is printed: whoever starts
	// Pisces and waits for that line can stop it with one.
	ctx, sig, stop := signalContext()
	defer stop()
	hostport := net.JoinHostPort(a.Host, strconv.Itoa(srv.Port()))
	if a.WebNoToken {
		fmt.Fprintf(stdio.Stdout, "UI: http://%s/\n", hostport)
	} else {
		fmt.Fprintf(stdio.Stdout, "UI: http://%s/?token=%s\n", hostport, token)
	}
	fmt.Fprintf(stdio.Stdout, "WebSocket: ws://%s/ws\n", hostport)
	if a.ServeUI != "" {
		fmt.Fprintf(stdio.Stdout, "Static UI: %s\n", a.ServeUI)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	code := 0
	select {
	case err := <-served:
		if err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
			code = 1
		}
	case <-ctx.Done():
		code = 143
		if s := sig(); s != nil {
			code = exitCodeFor(s)
		}
	case <-srv.ShutdownRequested():
	}
	// The MCP servers stop while the sessions do (Main's closeMCP then
	// waits for them): both fit in the 3-second exit.
	go env.closeMCP()
	srv.Shutdown()
	return code
}

// webToken is the access token: --web-token-file, else PISCES_WEB_TOKEN,
// else a random one (only for a loopback host: a server others can reach
// starts only with a token its owner chose and can hand out).
func webToken(a *Args) (string, error) {
	token := ""
	switch {
	case a.WebTokenFile != "":
		p, err := expandHome(a.WebTokenFile)
		if err != nil {
			return "", fmt.Errorf("--web-token-file: %v", err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("--web-token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return "", fmt.Errorf("--web-token-file: %s is empty", p)
		}
	case os.Getenv("PISCES_WEB_TOKEN") != "":
		token = strings.TrimSpace(os.Getenv("PISCES_WEB_TOKEN"))
	}
	loopback := web.IsLoopbackHost(a.Host)
	if a.WebNoToken {
		if token != "" {
			return "", usagef("--web-no-token cannot be combined with a token (PISCES_WEB_TOKEN, --web-token-file)")
		}
		if !loopback {
			return "", usagef("--web-no-token is refused with the non-loopback host %s", a.Host)
		}
		return "", nil
	}
	if token == "" {
		if !loopback {
			return "", usagef("--host %s is reachable from other machines: give the token yourself (PISCES_WEB_TOKEN or --web-token-file)", a.Host)
		}
		token = web.NewToken()
	}
	if len(token) < 16 {
		return "", usagef("the web token is too short: use at least 16 characters (a random one has 43)")
	}
	return token, nil
}

// buildSession makes the core session of a store for web mode: the
// project of the store's cwd with its own settings, tools and extensions,
// under its trust decision (a project nothing has decided yet starts
// untrusted and is asked about in the page).
func (env *environment) buildSession(req sessions.BuildRequest) (*sessions.Built, error) {
	return env.buildSessionWith(req, nil, nil, nil)
}

// buildSessionWith is buildSession with the session's built-in tools
// passed through wrap (nil: as they are), their text files served by
// files (nil: the disk) and bash's commands run by commands (nil: by
// Pisces); ACP mode puts its permission gate, the editor's files and its
// terminals there.
func (env *environment) buildSessionWith(req sessions.BuildRequest, wrap func([]tools.Tool) []tools.Tool, files *tools.TextFiles, commands tools.CommandRunner) (*sessions.Built, error) {
	cwd := req.Store.Cwd()
	if cwd == "" {
		cwd = env.cwd
	}
	trusted := env.trusted
	if cwd != env.cwd {
		d, _ := env.trust.Known(cwd)
		trusted = d.Trusted
	}
	projectDir := ""
	if trusted {
		projectDir = cwd
	}
	st, err := settings.Load(env.agentDir, projectDir)
	if err != nil {
		return nil, err
	}
	var host *extensions.Host
	if !req.ReadOnly {
		// A read-only view runs nothing: no extensions for it.
		host = env.startExtensions(env.extensionOptionsFor(cwd, trusted, st))
	}
	closeExt := func() {
		if host != nil {
			host.Close()
		}
	}
	// Each session has its own bash spill files, deleted when it closes.
	spills := &tools.SpillFiles{}
	toolsFor := env.toolsWithFiles(st, spills, files, commands)
	if wrap != nil {
		plain := toolsFor
		toolsFor = func(dir string) []tools.Tool { return wrap(plain(dir)) }
	}
	ts := toolsFor(cwd)
	active, allowed, err := env.selectTools(host, ts, st)
	if err != nil {
		closeExt()
		return nil, err
	}
	sessDir, err := env.customSessionDir()
	if err != nil {
		closeExt()
		return nil, err
	}
	var ms *mcp.Session
	bind := func(*core.Session) {}
	if !req.ReadOnly {
		ms, bind = env.mcpSession(cwd, trusted)
	}
	opts := env.coreOptions(project{
		cwd: cwd, settings: st, trusted: trusted, extensions: host,
		tools: ts, active: active, allowed: allowed, sessionDir: sessDir,
		toolsFor: toolsFor, spills: spills, mcp: ms,
	}, req.Store)
	// The session's own model and thinking level come back; the session it
	// was opened from (or the command line) is the fallback. The session
	// the server starts with takes the command line's as given.
	opts.PreferStored = !req.Initial
	if req.From != nil {
		if m := req.From.Model(); m != nil {
			opts.Model = m
		}
		opts.ThinkingLevel = req.From.ThinkingLevel()
	}
	sess, err := core.New(opts)
	if err != nil {
		closeExt()
		return nil, err
	}
	bind(sess)
	if host != nil {
		host.SetActions(sess.Actions())
		host.SetEmit(sess.EmitExternal)
	}
	return &sessions.Built{Core: sess, Extensions: host, Close: closeExt}, nil
}
