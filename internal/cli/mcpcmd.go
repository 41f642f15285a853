package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pisces-agent/pisces/internal/mcp"
	"github.com/pisces-agent/pisces/internal/settings"
)

const mcpUsage = `Usage:
  pisces mcp [list] [--agent-dir DIR] [--approve|--no-approve] [--mcp-config FILE]
  pisces mcp add NAME [--exposure E] [--description D] [--project] -- COMMAND [ARGS...]
  pisces mcp add NAME [--exposure E] [--description D] [--project] --url URL
  pisces mcp remove NAME [--project]

The MCP servers of mcp.json (pi 1.5's format; docs/mcp.md). list connects
to every server (the agent dir's, the trusted project's and --mcp-config
files') and prints its state, tool count, exposure and scope, its command
and tools. add and remove edit <agentDir>/mcp.json, or with --project the
project's .pisces/mcp.json, in place (comments and order are kept).
Exposures: codemode (default), deferred, direct, hidden.
`

// runMCPCommand is pisces mcp.
func runMCPCommand(argv []string, stdio IO) int {
	for _, x := range argv {
		if x == "--" {
			break
		}
		if x == "-h" || x == "--help" {
			fmt.Fprint(stdio.Stdout, mcpUsage)
			return 0
		}
	}
	verb, rest := "list", argv
	if len(argv) > 0 && !strings.HasPrefix(argv[0], "-") {
		verb, rest = argv[0], argv[1:]
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stdio.Stderr, "pisces mcp %s: %s\n", verb, fmt.Sprintf(format, args...))
		return 2
	}
	// Options: the verb's own, then those of a run that say where files
	// are (--agent-dir, --approve, --no-approve, --mcp-config).
	var runArgs []string
	var name, exposure, description, url string
	var project, haveDesc bool
	var command []string
	for i := 0; i < len(rest); i++ {
		x := rest[i]
		value := func() (string, bool) {
			if k, v, ok := strings.Cut(x, "="); ok && strings.HasPrefix(k, "--") {
				return v, true
			}
			if i+1 < len(rest) {
				i++
				return rest[i], true
			}
			return "", false
		}
		key, _, _ := strings.Cut(x, "=")
		switch {
		case x == "--":
			command = rest[i+1:]
			i = len(rest)
		case key == "--exposure" && verb == "add":
			v, ok := value()
			if !ok {
				return fail("--exposure needs a value")
			}
			exposure = v
		case key == "--description" && verb == "add":
			v, ok := value()
			if !ok {
				return fail("--description needs a value")
			}
			description, haveDesc = v, true
		case key == "--url" && verb == "add":
			v, ok := value()
			if !ok {
				return fail("--url needs a value")
			}
			url = v
		case x == "--project" && verb != "list":
			project = true
		case key == "--agent-dir" || key == "--mcp-config":
			v, ok := value()
			if !ok {
				return fail("%s needs a value", key)
			}
			runArgs = append(runArgs, key, v)
		case x == "-a" || x == "--approve" || x == "-na" || x == "--no-approve":
			runArgs = append(runArgs, x)
		case !strings.HasPrefix(x, "-") && name == "" && verb != "list":
			name = x
		default:
			return fail("unexpected argument %q (see pisces mcp --help)", x)
		}
	}
	a, err := ParseArgs(runArgs)
	if err != nil {
		return fail("%v", err)
	}
	env, err := quietBaseSetup(a, stdio)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces mcp: %v\n", err)
		return 1
	}
	file := filepath.Join(env.agentDir, mcp.FileName)
	if project {
		file = filepath.Join(env.cwd, ".pisces", mcp.FileName)
	}
	switch verb {
	case "list":
		return mcpList(env, stdio)
	case "add":
		switch {
		case name == "":
			return fail("give the server's NAME")
		case (url == "") == (len(command) == 0):
			return fail("give either -- COMMAND [ARGS...] or --url URL")
		}
		entry := mcpEntry{URL: url, Exposure: exposure}
		if haveDesc {
			entry.Description = description
		}
		if len(command) > 0 {
			entry.Command, entry.Args = command[0], command[1:]
		}
		// The entry must be one a run accepts.
		if cfg := mcp.Parse(mcpEntryJSON(name, entry), file, mcp.ScopeGlobal); len(cfg.Problems) > 0 {
			msg := strings.TrimSuffix(cfg.Problems[0], " (skipped)")
			if i := strings.Index(msg, ": server "); i >= 0 {
				msg = msg[i+2:]
			}
			return fail("%s", msg)
		}
		if err := settings.EditFile(file, []string{"mcpServers", name}, entry); err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces mcp add: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdio.Stdout, "Added MCP server %s to %s\n", name, file)
		return 0
	case "remove":
		if name == "" {
			return fail("give the server's NAME")
		}
		cfg := mcp.Load(mcp.Files{Extra: []string{file}})
		if cfg.Find(name) == nil {
			fmt.Fprintf(stdio.Stderr, "pisces mcp remove: no server %s in %s\n", name, file)
			return 1
		}
		if err := settings.EditFile(file, []string{"mcpServers", name}, nil); err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces mcp remove: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdio.Stdout, "Removed MCP server %s from %s\n", name, file)
		return 0
	}
	return fail("unknown command (list, add or remove)")
}

// mcpEntry is a server entry as pi mcp add writes it, in its key order.
type mcpEntry struct {
	Command     string   `json:"command,omitempty"`
	Args        []string `json:"args,omitempty"`
	URL         string   `json:"url,omitempty"`
	Exposure    string   `json:"exposure,omitempty"`
	Description string   `json:"description,omitempty"`
}

func mcpEntryJSON(name string, e mcpEntry) []byte {
	b, _ := json.Marshal(map[string]map[string]mcpEntry{"mcpServers": {name: e}})
	return b
}

// mcpList connects every server and prints what pi mcp list prints.
func mcpList(env *environment, stdio IO) int {
	m := mcp.NewManager(mcp.Options{AgentDir: env.agentDir, Extra: env.args.MCPConfig, Cwd: env.cwd, Version: Version})
	defer m.Close()
	servers := m.Servers(env.cwd, env.trusted)
	mcp.WaitSettled(context.Background(), servers)
	w := stdio.Stdout
	for _, p := range m.Problems(env.cwd, env.trusted) {
		fmt.Fprintf(stdio.Stderr, "pisces mcp list: %s\n", p)
	}
	if len(servers) == 0 {
		fmt.Fprintf(w, "No MCP servers (%s", filepath.Join(env.agentDir, mcp.FileName))
		if mcp.HasProjectConfig(env.cwd) && !env.trusted {
			fmt.Fprint(w, "; the project's are not read until it is trusted")
		}
		fmt.Fprintln(w, ")")
		return 0
	}
	for _, s := range servers {
		st := s.Status()
		state := st.State
		switch st.State {
		case mcp.StateConnected:
			n := len(st.Tools)
			state = "connected, " + plural(n, "tool")
		case mcp.StateFailed:
			state = "failed: " + st.Error
		}
		fmt.Fprintf(w, "%s: %s (%s, %s)\n", st.Name, state, st.Exposure, st.Scope)
		if st.Description != "" {
			fmt.Fprintf(w, "  %s\n", st.Description)
		}
		if st.Note != "" {
			fmt.Fprintf(w, "  note: %s\n", st.Note)
		}
		fmt.Fprintf(w, "  %s\n", st.Command)
		if len(st.Tools) > 0 {
			fmt.Fprintf(w, "  tools: %s\n", strings.Join(st.Tools, ", "))
		}
		if st.Resources {
			fmt.Fprintln(w, "  offers resources")
		}
	}
	if mcp.HasProjectConfig(env.cwd) && !env.trusted {
		fmt.Fprintln(w, "The project's MCP servers are not read until it is trusted (--approve).")
	}
	return 0
}
