package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/sessions"
	"github.com/pisces-agent/pisces/internal/tui"
)

// interactive reports whether the command line asks for the interactive
// UI: no -p and no --mode, and a terminal on both stdin and stdout.
func interactive(a *Args, stdio IO) bool {
	return !a.Print && !a.ModeSet && !a.ListModels && stdio.StdinIsTTY && stdio.StdoutIsTTY
}

// runTUI runs the interactive terminal UI over the session manager web
// mode uses (one writer per session file; /new, /resume, /fork and /clone
// open other live sessions of it) until the user quits or a signal
// arrives; the runs are then aborted and the sessions flushed.
func runTUI(env *environment, stdio IO) int {
	a := env.args
	if err := env.absResourcePaths(a); err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	th, err := env.chooseTheme()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 2
	}
	keys, err := tui.LoadKeymap(env.agentDir)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 2
	}
	fileText, images, err := fileArguments(a.FileArgs, env.cwd)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	msgs := a.Messages
	first := ""
	if len(msgs) > 0 {
		first, msgs = msgs[0], msgs[1:]
	}
	prompt := initialMessage("", fileText, first)

	dir, err := env.sessionDir()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	bridge := tui.NewBridge()
	mgr := sessions.New(sessions.Options{
		Build: env.buildSession,
		Resolve: func(ref string) (string, error) {
			return session.Resolve(env.agentDir, env.cwd, dir, ref)
		},
		OnLoad: func(l *sessions.Live) {
			if l.Extensions != nil {
				l.Extensions.SetUI(bridge)
			}
			l.Core.SetTrustAsk(bridge.AskTrust)
		},
		// One viewer, no page reloads to wait for: a session left is
		// closed as soon as its work has stopped.
		Grace: -1,
		Log:   stdio.Stderr,
	})
	defer mgr.Close()
	store, err := env.openStore()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	live, err := mgr.Adopt(store)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	// The UI is the session's viewer; once it moves to another session
	// (/new, /resume, /fork, /clone) this one is closed when its work
	// has stopped.
	mgr.Acquire(live)
	mgr.Unpin(live)
	if a.Name != "" {
		if err := live.Core.SetSessionName(a.Name); err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces: --name: %v\n", err)
			return 2
		}
	}
	mode := a.TUIMode
	if mode == "" {
		mode = env.settings.String("tuiMode", "fullscreen")
	}
	ctx, sig, stop := signalContext()
	defer stop()
	in, out := stdio.Stdin, stdio.Stdout
	if in == nil {
		in = os.Stdin
	}
	err = tui.Run(ctx, tui.Options{
		Manager:    mgr,
		Live:       live,
		Theme:      th,
		Keys:       keys,
		Inline:     mode == "inline",
		Version:    Version,
		Prompt:     prompt,
		Images:     images,
		FollowUps:  msgs,
		OpenResume: a.Resume,
		OpenURL:    openBrowser,
	}, bridge, in, out)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	if s := sig(); s != nil {
		return exitCodeFor(s)
	}
	return 0
}

// chooseTheme reads the theme files (<agentDir>/themes, the trusted
// project's .pi/themes and .pisces/themes unless --no-themes; --theme
// files) and picks the theme: --use-theme or --theme NAME, else the last
// --theme file, else the setting theme, else dark.
func (env *environment) chooseTheme() (*tui.Theme, error) {
	a := env.args
	var dirs []string
	if !a.NoThemes {
		dirs = append(dirs, filepath.Join(env.agentDir, "themes"))
		if env.trusted {
			dirs = append(dirs, filepath.Join(env.cwd, ".pi", "themes"), filepath.Join(env.cwd, ".pisces", "themes"))
		}
	}
	files, err := env.absPaths(a.ThemeFiles)
	if err != nil {
		return nil, err
	}
	var last *tui.Theme
	for _, f := range files {
		th, err := tui.LoadThemeFile(f)
		if err != nil {
			return nil, fmt.Errorf("--theme: %v", err)
		}
		last = th
	}
	ts := tui.DiscoverThemes(dirs, files)
	for _, p := range ts.Problems {
		fmt.Fprintf(env.stdio.Stderr, "pisces: %v (skipped)\n", p)
	}
	switch {
	case a.Theme != "":
		return ts.Get(a.Theme)
	case last != nil:
		return last, nil
	}
	th, err := ts.Get(env.settings.String("theme", "dark"))
	if err != nil {
		return nil, fmt.Errorf("settings theme: %v", err)
	}
	return th, nil
}
