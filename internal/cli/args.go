// Package cli parses Pisces' command line, builds the core session and runs
// the selected mode.
package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Args is the parsed command line.
type Args struct {
	Mode               string   // text, json, rpc, web, acp
	ModeSet            bool     // --mode was given
	TUIMode            string   // --tui-mode: fullscreen (default) or inline
	Theme              string   // --use-theme NAME, or --theme NAME: the theme chosen by name
	ThemeFiles         []string // --theme PATH (repeatable): pi theme files
	NoThemes           bool     // --no-themes: no theme files discovered
	Print              bool
	Provider           string
	Model              string
	Models             []string
	Thinking           string
	APIKey             string
	Tools              []string
	ToolsSet           bool
	NoTools            bool
	ExcludeTools       []string
	NoBuiltinTools     bool
	SystemPrompt       string
	AppendSystemPrompt []string
	SessionDir         string
	NoSession          bool
	Session            string
	SessionID          string
	Continue           bool
	Resume             bool
	Fork               string
	Name               string
	AgentDir           string
	Script             string
	RPCCompat          string
	RPCDeltaInterval   time.Duration
	PrintSchema        bool
	NoContextFiles     bool
	NoExtensions       bool
	Extensions         []string
	Skills             []string
	NoSkills           bool
	PromptTemplates    []string
	NoPromptTemplates  bool
	NoMCP              bool
	MCPConfig          []string // --mcp-config files
	Approve            *bool
	Offline            bool
	ListModels         bool
	ListModelsSearch   string
	ListModelsAll      bool // --all: the whole catalogue, not only models with a key
	Export             []string
	Verbose            bool
	Version            bool
	Help               bool
	// Web mode (the flag names of pi's web fork, plus the token flags).
	Host           string
	Port           int
	AllowedOrigins []string
	ServeUI        string
	WebTokenFile   string
	WebNoToken     bool
	Messages       []string
	FileArgs       []string // @file arguments, without the '@'
}

// UsageError is a bad command line: one line on stderr, exit 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// ParseArgs reads the command line (without the program name).
func ParseArgs(argv []string) (*Args, error) {
	a := &Args{Mode: "text", RPCDeltaInterval: 16 * time.Millisecond, Host: "127.0.0.1", Port: 4781}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		if arg == "--" {
			for _, m := range argv[i+1:] {
				a.addPositional(m)
			}
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			a.addPositional(arg)
			continue
		}
		name, inline, hasInline := strings.Cut(arg, "=")
		if !strings.HasPrefix(name, "--") {
			hasInline = false
			name = arg
		}
		value := func() (string, error) {
			if hasInline {
				return inline, nil
			}
			if i+1 >= len(argv) {
				return "", usagef("%s needs a value", name)
			}
			i++
			return argv[i], nil
		}
		noValue := func() error {
			if hasInline {
				return usagef("%s takes no value", name)
			}
			return nil
		}
		var err error
		var v string
		switch name {
		case "--mode":
			if v, err = value(); err == nil {
				if v != "text" && v != "json" && v != "rpc" && v != "web" && v != "acp" {
					err = usagef("Invalid mode %q: expected text, json, rpc, web or acp", v)
				}
				a.Mode, a.ModeSet = v, true
			}
		case "-p", "--print":
			a.Print = true
			err = noValue()
		case "--provider":
			a.Provider, err = value()
		case "-m", "--model":
			a.Model, err = value()
		case "--models":
			if v, err = value(); err == nil {
				a.Models = splitList(v)
			}
		case "--thinking":
			if v, err = value(); err == nil {
				if !validLevel(v) {
					err = usagef("Invalid thinking level %q: expected off, minimal, low, medium, high, xhigh or max", v)
				}
				a.Thinking = v
			}
		case "--api-key":
			a.APIKey, err = value()
		case "-t", "--tools":
			if v, err = value(); err == nil {
				a.Tools = splitList(v)
				a.ToolsSet = true
				if msg := toolListError(a.Tools); msg != "" {
					err = usagef("%s: %s", name, msg)
				}
			}
		case "-nt", "--no-tools":
			a.NoTools = true
			err = noValue()
		case "-xt", "--exclude-tools":
			if v, err = value(); err == nil {
				a.ExcludeTools = append(a.ExcludeTools, splitList(v)...)
			}
		case "-nbt", "--no-builtin-tools":
			a.NoBuiltinTools = true
			err = noValue()
		case "--system-prompt":
			a.SystemPrompt, err = value()
		case "--append-system-prompt":
			if v, err = value(); err == nil {
				a.AppendSystemPrompt = append(a.AppendSystemPrompt, v)
			}
		case "--session-dir":
			a.SessionDir, err = value()
		case "--no-session":
			a.NoSession = true
			err = noValue()
		case "--session":
			a.Session, err = value()
		case "--session-id":
			a.SessionID, err = value()
		case "-c", "--continue":
			a.Continue = true
			err = noValue()
		case "-r", "--resume":
			a.Resume = true
			err = noValue()
		case "--fork":
			a.Fork, err = value()
		case "-n", "--name":
			a.Name, err = value()
		case "--agent-dir":
			a.AgentDir, err = value()
		case "--script":
			a.Script, err = value()
		case "--rpc-compat":
			if v, err = value(); err == nil {
				if v != "legacy" && v != "current" && v != "omp" {
					err = usagef("Invalid --rpc-compat %q: expected legacy, current or omp", v)
				}
				a.RPCCompat = v
			}
		case "--rpc-delta-interval":
			if v, err = value(); err == nil {
				a.RPCDeltaInterval, err = parseInterval(v)
			}
		case "--host":
			a.Host, err = value()
		case "--port":
			if v, err = value(); err == nil {
				a.Port, err = strconv.Atoi(v)
				if err != nil || a.Port < 0 || a.Port > 65535 {
					err = usagef("Invalid --port %q: expected a port number (0 picks a free port)", v)
				}
			}
		case "--web-allowed-origin":
			if v, err = value(); err == nil {
				a.AllowedOrigins = append(a.AllowedOrigins, v)
			}
		case "--serve-ui":
			a.ServeUI, err = value()
		case "--web-token-file":
			a.WebTokenFile, err = value()
		case "--web-no-token":
			a.WebNoToken = true
			err = noValue()
		case "--print-schema":
			a.PrintSchema = true
			err = noValue()
		case "-nc", "--no-context-files":
			a.NoContextFiles = true
			err = noValue()
		case "-ne", "--no-extensions":
			a.NoExtensions = true
			err = noValue()
		case "-e", "--extension":
			if v, err = value(); err == nil {
				a.Extensions = append(a.Extensions, v)
			}
		case "--skill":
			if v, err = value(); err == nil {
				a.Skills = append(a.Skills, v)
			}
		case "-ns", "--no-skills":
			a.NoSkills = true
			err = noValue()
		case "--prompt-template":
			if v, err = value(); err == nil {
				a.PromptTemplates = append(a.PromptTemplates, v)
			}
		case "-np", "--no-prompt-templates":
			a.NoPromptTemplates = true
			err = noValue()
		case "--no-mcp":
			a.NoMCP = true
			err = noValue()
		case "--mcp-config":
			if v, err = value(); err == nil {
				a.MCPConfig = append(a.MCPConfig, v)
			}
		case "-a", "--approve":
			t := true
			a.Approve = &t
			err = noValue()
		case "-na", "--no-approve":
			f := false
			a.Approve = &f
			err = noValue()
		case "--offline":
			a.Offline = true
			err = noValue()
		case "--list-models":
			a.ListModels = true
			if hasInline {
				a.ListModelsSearch = inline
			} else if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(argv[i+1], "@") {
				i++
				a.ListModelsSearch = argv[i]
			}
		case "--all":
			a.ListModelsAll = true
			err = noValue()
			if a.ListModels && a.ListModelsSearch == "" && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(argv[i+1], "@") {
				i++
				a.ListModelsSearch = argv[i]
			}
		case "--export":
			if v, err = value(); err == nil {
				a.Export = []string{v}
				if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
					i++
					a.Export = append(a.Export, argv[i])
				}
			}
		case "--verbose":
			a.Verbose = true
			err = noValue()
		case "-v", "--version":
			a.Version = true
		case "-h", "--help":
			a.Help = true
		case "--tui-mode":
			if v, err = value(); err == nil {
				if v != "fullscreen" && v != "inline" {
					err = usagef("Invalid --tui-mode %q: expected fullscreen or inline", v)
				}
				a.TUIMode = v
			}
		case "--theme", "--use-theme":
			if v, err = value(); err == nil {
				switch {
				case v == "":
					err = usagef("%s needs a theme's name or file", name)
				case name == "--theme" && isThemePath(v):
					a.ThemeFiles = append(a.ThemeFiles, v)
				case name == "--use-theme" || a.Theme == "":
					a.Theme = v
				}
			}
		case "--no-themes":
			if err = noValue(); err == nil {
				a.NoThemes = true
			}
		default:
			err = usagef("Unknown option: %s (see --help)", name)
		}
		if err != nil {
			return nil, err
		}
	}
	if a.ListModelsAll && !a.ListModels {
		return nil, usagef("--all goes with --list-models (--list-models --all lists every known model)")
	}
	if a.Print && a.Mode == "text" {
		a.Mode = "text"
	}
	return a, nil
}

// addPositional records a message, or an @file argument (pi's: the file is
// read into the first prompt).
func (a *Args) addPositional(arg string) {
	if name, ok := strings.CutPrefix(arg, "@"); ok && name != "" {
		a.FileArgs = append(a.FileArgs, name)
		return
	}
	a.Messages = append(a.Messages, arg)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func validLevel(s string) bool {
	switch s {
	case "off", "minimal", "low", "medium", "high", "xhigh", "max":
		return true
	}
	return false
}

func parseInterval(v string) (time.Duration, error) {
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Millisecond, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, nil
	}
	return 0, usagef("Invalid --rpc-delta-interval %q: expected milliseconds (e.g. 16) or a duration (e.g. 16ms)", v)
}

const helpText = `pisces - a headless coding agent speaking pi's RPC protocol

Usage:
  pisces [options] [--] [@file...] [message...]
  pisces <command> [options]

  @file arguments are read into the first message: text inline as
  <file name="PATH">...</file>, images attached.

Commands:
  sessions [--all]            list this folder's sessions (--all: every folder's)
  list                        list installed packages (none can be installed yet) and the
                              extensions, skills and prompt templates found, with sources
  config                      show those resources and which of them a run loads
  auth login|logout|status|check|print-bearer-token|print-api-key
                              subscription logins and keys in auth.json (docs/auth.md)
  install, remove, uninstall, update
                              not supported yet: say what to do instead
  mcp                         not supported yet: says what to use instead
  <command> --help            help for one command
  A first argument that is a command word runs the command; anywhere else it is
  a message: pisces -- config, pisces -p config.

Modes:
  --mode text|json|rpc|web|acp
                              text (default): print the final answer; json: print
                              the session header, then every event as a JSON line;
                              rpc: JSONL protocol on stdio; web: HTTP server with the
                              protocol on a WebSocket and a browser UI (docs/web.md);
                              acp: Agent Client Protocol on stdio for editors
                              (docs/acp.md)
  -p, --print                 print the final answer and exit (text mode)

Model:
  --provider NAME             provider to use (e.g. scripted)
  -m, --model PATTERN         provider/id, an id or a pattern; ":level" sets thinking
  --models A,B                models cycle_model goes through
  --thinking LEVEL            off, minimal, low, medium, high, xhigh, max
  --api-key KEY               API key for the provider
  --script FILE               the scripted provider's script (docs/scripted-provider.md)

Sessions:
  --agent-dir DIR             config and sessions (default $PISCES_CODING_AGENT_DIR
                              or ~/.pisces/agent; use ~/.pi/agent to share pi's;
                              a relative DIR is under the working directory)
  --session-dir DIR           session files go straight into DIR (and are found there)
  --no-session                keep the session in memory only; nothing is written
  -c, --continue              continue the most recent session of this folder
  -r, --resume                pick one of this folder's sessions from a numbered list
                              (text and json modes, with a terminal on stdin)
  --session PATH|ID           open a session file, or a session by id or id prefix
  --session-id ID             this folder's session with that id, else a new one with it
  --fork PATH|ID              copy a session (of any folder) into a new session here
  -n, --name NAME             name the session
  --export FILE [OUT]         write a session file as one HTML page and exit

Tools:
  -t, --tools LIST            the active tools: names and patterns (* matches any
                              characters), built-in or extension; a list made only of
                              +name/-name entries changes the default set instead
  -xt, --exclude-tools LIST   names and patterns of tools to leave out (extension tools too)
  -nt, --no-tools             no tool by default, built-in or extension
  -nbt, --no-builtin-tools    no built-in tool by default; extension tools stay
                              Built-in tools: read, bash, edit, write, task, todo_write
                              (the default set), grep, find, ls

Prompt and resources:
  --system-prompt TEXT        replace the system prompt
  --append-system-prompt T    append text (or a file's contents); repeatable
  -nc, --no-context-files     do not read AGENTS.md / CLAUDE.md
  -e, --extension PATH        load an extension; repeatable (docs/extensions.md)
  -ne, --no-extensions        do not load the extensions of the agent dir, the project
                              and settings; -e paths still load
  --skill PATH                load a skill (SKILL.md or a directory); repeatable
  -ns, --no-skills            do not load the agent dir's and project's skills;
                              --skill paths still load
  --prompt-template PATH      load a prompt template (.md or a directory); repeatable
  -np, --no-prompt-templates  do not load the agent dir's and project's templates;
                              --prompt-template paths still load
  --no-mcp                    do not read mcp.json or start MCP servers (docs/mcp.md)
  --mcp-config FILE           read MCP servers from FILE too (pi's mcp.json format);
                              repeatable

Project trust (whether the files in the project's .pisces/ are used):
  -a, --approve               trust the project Pisces starts in for this run (its own
                              .pisces/ resources load; not remembered)
  -na, --no-approve           trust no project in this run and ask nothing; without
                              either, a remembered answer, else a question (rpc client,
                              terminal), else not trusted

RPC:
  --rpc-compat legacy         the older wire (immediate prompt ack, auto_compaction_*,
                              hook_error, message_update snapshots)
  --rpc-compat omp            oh-my-pi's wire from the start (prompt_result,
                              session_settled, omp's event names); its client
                              negotiates it itself (protocol v2)
  --rpc-delta-interval MS     merge text deltas within this window (default 16; 0 = never)
  --print-schema              print the JSON Schema of the protocol

Web mode:
  --host HOST                 address to listen on (default 127.0.0.1; another than
                              loopback needs PISCES_WEB_TOKEN or --web-token-file)
  --port PORT                 port (default 4781; 0 picks a free port)
  --web-allowed-origin ORIGIN a browser origin allowed besides the server's own (a TLS
                              proxy's https://host); repeatable
  --serve-ui DIR              serve this UI build instead of the built-in UI
  --web-token-file FILE       the access token (else $PISCES_WEB_TOKEN, else a random
                              one printed in the UI address)
  --web-no-token              no token (loopback host only, behind another gate)

Interactive mode (no -p/--mode, stdin and stdout a terminal; docs/tui.md):
  --tui-mode MODE             fullscreen (default, alternate screen) or inline
  --theme PATH                 a pi theme file (repeatable); the last one is used
                              unless a theme is chosen by name
  --use-theme NAME, --theme NAME
                              the theme: dark (default), light or the name of a
                              theme file in <agentDir>/themes or the trusted
                              project's .pi/themes or .pisces/themes
  --no-themes                 read no theme files from those folders

Other:
  --list-models [SEARCH]      list the models you have keys for (fuzzy SEARCH)
  --list-models --all         list every model Pisces knows
  --offline                   no startup network use (Pisces makes none at startup)
  --verbose                   also report providers skipped for want of an adapter
  -v, --version               print the version
  -h, --help                  this help
  --                          end of options: the rest are messages
`

// isThemePath tells a theme file (a path, or a name ending in .json) from
// a theme's name.
func isThemePath(v string) bool {
	return strings.ContainsAny(v, `/\`) || strings.HasSuffix(strings.ToLower(v), ".json")
}
