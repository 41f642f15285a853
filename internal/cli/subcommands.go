package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// A subcommand is pi's first-argument command word (`pisces list`, …). A
// first argument that is one of these words is never a prompt; after `--`
// or another flag it is (`pisces -- config`, `pisces -p config`).
type subcommand struct {
	name  string
	usage string // the usage line and description for `pisces NAME --help`
	// flags are the options it accepts: name (and alias) -> takes a value.
	flags map[string]bool
	do    func(sub *subcommand, args *Args, extra map[string]bool, stdio IO) int
	// raw, when set, parses its own arguments (a subcommand with commands
	// of its own).
	raw func(argv []string, stdio IO) int
}

// Options every resource-reading subcommand accepts.
var resourceFlags = map[string]bool{
	"--agent-dir": true,
	"-a":          false, "--approve": false, "-na": false, "--no-approve": false,
	"-e": true, "--extension": true, "-ne": false, "--no-extensions": false,
	"--skill": true, "-ns": false, "--no-skills": false,
	"--prompt-template": true, "-np": false, "--no-prompt-templates": false,
}

var subcommands = []*subcommand{
	{name: "list", usage: `Usage:
  pisces list [--approve|--no-approve] [resource options]

List installed packages (Pisces cannot install packages yet), then the
extensions, skills and prompt templates Pisces finds, with where each comes
from. Resource options (-e, --skill, --prompt-template, --no-extensions,
--no-skills, --no-prompt-templates, --agent-dir) are those of a run.
`, flags: resourceFlags, do: runList},
	{name: "config", usage: `Usage:
  pisces config [--approve|--no-approve] [resource options]

Show the extensions, skills and prompt templates Pisces finds and which of
them a run with the same options would load. (pi opens a selector to turn
package resources on and off; Pisces has no terminal UI and no packages yet.)
`, flags: resourceFlags, do: runConfig},
	{name: "sessions", usage: `Usage:
  pisces sessions [--all] [--session-dir DIR] [--agent-dir DIR]

List this folder's sessions, newest first: when each was last modified, its
id, message count, name, first message and file. --all lists every folder's.
Open one with pisces --session ID|PATH, or continue the newest with -c.
`, flags: map[string]bool{"--all": false, "--session-dir": true, "--agent-dir": true}, do: runSessionsCmd},
	{name: "install", usage: "Usage:\n  pisces install <source>\n\nNot supported yet: Pisces cannot install packages.\n", do: runInstall},
	{name: "remove", usage: "Usage:\n  pisces remove <source>\n\nNot supported yet: Pisces cannot install packages.\n", do: runRemove},
	{name: "uninstall", usage: "Usage:\n  pisces uninstall <source>\n\nThe same as remove. Not supported yet: Pisces cannot install packages.\n", do: runRemove},
	{name: "update", usage: "Usage:\n  pisces update [source|self]\n\nNot supported yet: Pisces updates neither packages nor itself.\n", do: runUpdate},
	{name: "auth", usage: authUsage, raw: runAuth},
	{name: "mcp", usage: mcpUsage, raw: runMCPCommand},
}

func findSubcommand(word string) *subcommand {
	for _, s := range subcommands {
		if s.name == word {
			return s
		}
	}
	return nil
}

// run parses the subcommand's options and runs it. Subcommands that do
// nothing yet take any arguments (a package source, say) and explain.
func (s *subcommand) run(argv []string, stdio IO) int {
	if s.raw != nil {
		return s.raw(argv, stdio)
	}
	for _, x := range argv {
		if x == "--" {
			break
		}
		if x == "-h" || x == "--help" {
			fmt.Fprint(stdio.Stdout, s.usage)
			return 0
		}
	}
	if s.flags == nil {
		return s.do(s, &Args{AgentDir: agentDirFor(argv)}, nil, stdio)
	}
	// Only the subcommand's own options, then the shared ones, are allowed.
	extra := map[string]bool{}
	var rest []string
	for i := 0; i < len(argv); i++ {
		x := argv[i]
		name, _, inline := strings.Cut(x, "=")
		takesValue, ok := s.flags[name]
		switch {
		case !strings.HasPrefix(x, "-") || x == "-" || x == "--":
			fmt.Fprintf(stdio.Stderr, "pisces %s: unexpected argument %q (see pisces %s --help)\n", s.name, x, s.name)
			return 2
		case !ok:
			fmt.Fprintf(stdio.Stderr, "pisces %s: unknown option %s (see pisces %s --help)\n", s.name, name, s.name)
			return 2
		case name == "--all":
			extra[name] = true
			continue
		}
		rest = append(rest, x)
		if takesValue && !inline && i+1 < len(argv) {
			i++
			rest = append(rest, argv[i])
		}
	}
	a, err := ParseArgs(rest)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces %s: %v\n", s.name, err)
		return 2
	}
	return s.do(s, a, extra, stdio)
}

// quietBaseSetup is baseSetup without the note about an untrusted project
// (the listings say what is not loaded and why).
func quietBaseSetup(a *Args, stdio IO) (*environment, error) {
	quiet := stdio
	quiet.Stderr = io.Discard
	env, err := baseSetup(a, quiet)
	if env != nil {
		env.stdio = stdio
	}
	return env, err
}

func runSessionsCmd(s *subcommand, a *Args, extra map[string]bool, stdio IO) int {
	env, err := quietBaseSetup(a, stdio)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces %s: %v\n", s.name, err)
		return 1
	}
	return runSessions(env, extra["--all"])
}

func runList(s *subcommand, a *Args, _ map[string]bool, stdio IO) int {
	env, err := quietBaseSetup(a, stdio)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces %s: %v\n", s.name, err)
		return 1
	}
	fmt.Fprintln(stdio.Stdout, "No packages installed (Pisces cannot install packages yet).")
	writeInventory(stdio.Stdout, env.inventory(), false)
	return 0
}

func runConfig(s *subcommand, a *Args, _ map[string]bool, stdio IO) int {
	env, err := quietBaseSetup(a, stdio)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces %s: %v\n", s.name, err)
		return 1
	}
	fmt.Fprintf(stdio.Stdout, "Resources for %s (agent dir %s):\n", env.cwd, env.agentDir)
	writeInventory(stdio.Stdout, env.inventory(), true)
	fmt.Fprint(stdio.Stdout, `
[x] loads in a run with these options; [ ] does not, and why. Pisces has no
selector to turn resources on and off yet: --no-extensions, --no-skills and
--no-prompt-templates turn off the ones it finds for a run, and project
resources (.pisces/) load only in a trusted project (--approve).
`)
	return 0
}

// agentDirFor is the agent dir an unsupported subcommand's advice names.
func agentDirFor(argv []string) string {
	flag := ""
	for i, x := range argv {
		if v, ok := strings.CutPrefix(x, "--agent-dir="); ok {
			flag = v
		} else if x == "--agent-dir" && i+1 < len(argv) {
			flag = argv[i+1]
		}
	}
	dir, err := resolveAgentDir(flag)
	if err != nil {
		return "~/.pisces/agent"
	}
	return dir
}

func runInstall(s *subcommand, a *Args, _ map[string]bool, stdio IO) int {
	dir := a.AgentDir
	fmt.Fprintf(stdio.Stderr, `pisces install: packages are not supported yet; nothing was installed.
Add resources as files instead:
  extensions:        an executable in %s, or -e PATH for one run
  skills:            a directory holding a SKILL.md in %s, or --skill PATH
  prompt templates:  a .md file in %s, or --prompt-template PATH
A trusted project can also keep them in .pisces/extensions, .pisces/skills and .pisces/prompts.
`, filepath.Join(dir, "extensions"), filepath.Join(dir, "skills"), filepath.Join(dir, "prompts"))
	return 1
}

func runRemove(s *subcommand, _ *Args, _ map[string]bool, stdio IO) int {
	fmt.Fprintf(stdio.Stderr, `pisces %s: packages are not supported yet, so there is none to remove.
To stop using an extension, skill or prompt template, delete or move its file
(pisces list shows where each one is), or turn them off for a run with
--no-extensions, --no-skills or --no-prompt-templates.
`, s.name)
	return 1
}

func runUpdate(s *subcommand, _ *Args, _ map[string]bool, stdio IO) int {
	fmt.Fprint(stdio.Stderr, `pisces update: not supported yet; nothing was updated.
Pisces is one binary: to update it, build or install a newer one (see README.md).
Its model catalogue is built in; add models the binary does not know in models.json.
There are no packages to update.
`)
	return 1
}
