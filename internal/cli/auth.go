package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/settings"
)

const authUsage = `Usage:
  pisces auth login [PROVIDER] [--no-browser] [--api-key]
  pisces auth logout PROVIDER
  pisces auth status
  pisces auth check [--provider P] [--model M] [--json] [--no-refresh]
  pisces auth print-bearer-token --provider P [--min-expiry 30m]
  pisces auth print-api-key --provider P

Subscription logins and API keys, kept in auth.json in the agent dir (the
file pi uses when both point at the same directory; see docs/auth.md).

  login         log in to a subscription: anthropic (Claude Pro/Max),
                openai-codex (ChatGPT Plus/Pro), github-copilot, openai
                (Sign in with ChatGPT); a picker when PROVIDER is left out. It prints the address to open and
                opens a browser when there is one; --no-browser uses the
                copy-code or device-code method instead. --api-key stores an
                API key for PROVIDER (any provider) instead of logging in.
  logout        forget PROVIDER's stored login or key (nothing is revoked).
  status        list what auth.json holds, without secrets.
  check         is the provider of a run ready? Prints ready, not_ready or
                invalid (exit 0, 1 or 2), never a secret; the provider is
                --provider, --model's, the settings' default or the first
                with a key. An expiring login is refreshed unless
                --no-refresh.
  print-bearer-token
                print a valid OAuth access token of P, refreshing it when
                less than --min-expiry (default 30m) is left.
  print-api-key print the key a request to P would use (any source).

Every command takes --agent-dir DIR.
`

// runAuth is "pisces auth ...".
func runAuth(argv []string, stdio IO) int {
	if len(argv) == 0 {
		fmt.Fprint(stdio.Stderr, authUsage)
		return 2
	}
	for _, x := range argv {
		if x == "-h" || x == "--help" {
			fmt.Fprint(stdio.Stdout, authUsage)
			return 0
		}
	}
	cmd, rest := argv[0], argv[1:]
	spec := map[string]map[string]bool{
		"login":              {"--no-browser": false, "--api-key": false},
		"logout":             {},
		"status":             {},
		"check":              {"--provider": true, "--model": true, "--json": false, "--no-refresh": false},
		"print-bearer-token": {"--provider": true, "--min-expiry": true},
		"print-api-key":      {"--provider": true},
	}[cmd]
	if spec == nil {
		fmt.Fprintf(stdio.Stderr, "pisces auth: unknown command %q (see pisces auth --help)\n", cmd)
		return 2
	}
	spec["--agent-dir"] = true
	flags, args, err := parseAuthFlags(rest, spec)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces auth %s: %v (see pisces auth --help)\n", cmd, err)
		return 2
	}
	maxArgs := map[string]int{"login": 1, "logout": 1}[cmd]
	if len(args) > maxArgs {
		fmt.Fprintf(stdio.Stderr, "pisces auth %s: unexpected argument %q (see pisces auth --help)\n", cmd, args[maxArgs])
		return 2
	}
	a := &Args{AgentDir: flags["--agent-dir"], Provider: flags["--provider"], Model: flags["--model"]}
	env, err := quietBaseSetup(a, stdio)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces auth %s: %v\n", cmd, err)
		return 1
	}
	reg, _ := models.Load(models.LoadOptions{AgentDir: env.agentDir, Providers: adapterFor})
	defer reg.Close()
	reg.Auth().Options().DeviceID = deviceID(env.settings)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &authCmd{name: cmd, stdio: stdio, env: env, reg: reg, store: reg.Auth(), flags: flags}
	switch cmd {
	case "login":
		return c.login(ctx, args)
	case "logout":
		return c.logout(ctx, args)
	case "status":
		return c.status(ctx)
	case "check":
		return c.check(ctx)
	case "print-bearer-token":
		return c.printBearer(ctx)
	default:
		return c.printAPIKey(ctx)
	}
}

// parseAuthFlags splits argv into the flags of spec (name -> takes a
// value) and the other arguments.
func parseAuthFlags(argv []string, spec map[string]bool) (map[string]string, []string, error) {
	flags := map[string]string{}
	var args []string
	for i := 0; i < len(argv); i++ {
		x := argv[i]
		if x == "--" {
			args = append(args, argv[i+1:]...)
			break
		}
		if !strings.HasPrefix(x, "-") || x == "-" {
			args = append(args, x)
			continue
		}
		name, value, inline := strings.Cut(x, "=")
		takes, ok := spec[name]
		if !ok {
			return nil, nil, fmt.Errorf("unknown option %s", name)
		}
		switch {
		case !takes && inline:
			return nil, nil, fmt.Errorf("%s takes no value", name)
		case !takes:
			value = "true"
		case !inline:
			if i+1 >= len(argv) {
				return nil, nil, fmt.Errorf("%s needs a value", name)
			}
			i++
			value = argv[i]
		}
		flags[name] = value
	}
	return flags, args, nil
}

type authCmd struct {
	name  string
	stdio IO
	env   *environment
	reg   *models.Registry
	store *auth.Store
	flags map[string]string
	lines *lineReader
}

func (c *authCmd) errorf(format string, args ...any) {
	fmt.Fprintf(c.stdio.Stderr, "pisces auth %s: %s\n", c.name, fmt.Sprintf(format, args...))
}

func (c *authCmd) input() *lineReader {
	if c.lines == nil {
		c.lines = newLineReader(c.stdio.Stdin)
	}
	return c.lines
}

// prompt prints question and reads one line of stdin.
func (c *authCmd) prompt(ctx context.Context, question string) (string, error) {
	fmt.Fprintln(c.stdio.Stdout, question)
	return c.input().next(ctx)
}

func (c *authCmd) login(ctx context.Context, args []string) int {
	id := ""
	if len(args) > 0 {
		id = args[0]
	}
	if c.flags["--api-key"] != "" {
		if id == "" {
			c.errorf("--api-key needs the PROVIDER whose key to store")
			return 2
		}
		if _, ok := c.reg.Provider(id); !ok {
			c.errorf("unknown provider %q (known: %s)", id, strings.Join(c.reg.Providers(), ", "))
			return 2
		}
		key, err := c.prompt(ctx, "API key for "+id+":")
		key = strings.TrimSpace(key)
		if err != nil || key == "" {
			c.errorf("no key given; nothing stored")
			return 1
		}
		if err := c.store.Set(ctx, id, &auth.Credential{Type: auth.TypeAPIKey, Key: key}); err != nil {
			c.errorf("%v", err)
			return 1
		}
		fmt.Fprintf(c.stdio.Stdout, "Stored the API key for %s in %s\n", id, models.HomeRelative(c.store.Path()))
		return 0
	}
	if id == "" {
		var err error
		if id, err = c.pick(ctx); err != nil {
			c.errorf("%v", err)
			return 2
		}
	}
	p, ok := auth.Lookup(id)
	if !ok {
		c.errorf("no subscription login for %q (logins: %s; store an API key with --api-key)", id, loginIDs())
		return 2
	}
	noBrowser := c.flags["--no-browser"] != ""
	ui := &auth.LoginUI{
		NoBrowser: noBrowser,
		OpenURL: func(u string) {
			fmt.Fprintf(c.stdio.Stdout, "Open this address to log in to %s:\n%s\n", p.Name(), u)
			if !noBrowser {
				openBrowser(u)
			}
		},
		Show:   func(msg string) { fmt.Fprintln(c.stdio.Stdout, msg) },
		Prompt: c.prompt,
	}
	if _, err := c.store.Login(ctx, id, ui); err != nil {
		if errors.Is(err, context.Canceled) {
			c.errorf("login cancelled")
		} else {
			c.errorf("%v", err)
		}
		return 1
	}
	fmt.Fprintf(c.stdio.Stdout, "Logged in to %s; the login is saved in %s\n", p.Name(), models.HomeRelative(c.store.Path()))
	return 0
}

func loginIDs() string {
	var ids []string
	for _, p := range auth.Providers() {
		ids = append(ids, p.ID())
	}
	return strings.Join(ids, ", ")
}

// pick asks which provider to log in to.
func (c *authCmd) pick(ctx context.Context) (string, error) {
	ps := auth.Providers()
	fmt.Fprintln(c.stdio.Stdout, "Log in to:")
	for i, p := range ps {
		fmt.Fprintf(c.stdio.Stdout, "  %d. %s (%s)\n", i+1, p.Name(), p.ID())
	}
	for {
		line, err := c.prompt(ctx, fmt.Sprintf("Number or name [1-%d]:", len(ps)))
		if err != nil {
			return "", errors.New("no provider chosen")
		}
		line = strings.TrimSpace(line)
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(ps) {
			return ps[n-1].ID(), nil
		}
		for _, p := range ps {
			if strings.EqualFold(line, p.ID()) {
				return p.ID(), nil
			}
		}
	}
}

func (c *authCmd) logout(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.errorf("which provider? (pisces auth logout PROVIDER)")
		return 2
	}
	had, err := c.store.Delete(ctx, args[0])
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	if had {
		fmt.Fprintf(c.stdio.Stdout, "Logged out of %s (removed from %s)\n", args[0], models.HomeRelative(c.store.Path()))
	} else {
		fmt.Fprintf(c.stdio.Stdout, "Nothing stored for %s\n", args[0])
	}
	return 0
}

func (c *authCmd) status(ctx context.Context) int {
	names, err := c.store.Names(ctx)
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	fmt.Fprintf(c.stdio.Stdout, "%s:\n", models.HomeRelative(c.store.Path()))
	if len(names) == 0 {
		fmt.Fprintln(c.stdio.Stdout, "  nothing stored")
	}
	for _, n := range names {
		cred, err := c.store.Get(ctx, n)
		switch {
		case err != nil:
			fmt.Fprintf(c.stdio.Stdout, "  %s: unusable entry: %v\n", n, err)
		case cred.IsOAuth():
			fmt.Fprintf(c.stdio.Stdout, "  %s: logged in (%s)\n", n, expiryText(cred.Expires))
		default:
			fmt.Fprintf(c.stdio.Stdout, "  %s: API key\n", n)
		}
	}
	return 0
}

func expiryText(ms int64) string {
	d := time.Until(time.UnixMilli(ms)).Round(time.Minute)
	if d <= 0 {
		return "token expired; refreshed on next use"
	}
	return "token valid for " + strings.TrimSuffix(d.String(), "0s")
}

// checkResult is check's answer; --json prints it.
type checkResult struct {
	Status     string `json:"status"`
	Provider   string `json:"provider,omitempty"`
	Model      string `json:"model,omitempty"`
	Credential string `json:"credential,omitempty"` // "oauth", "api_key", "models.json", "environment", "--api-key", "none"
	Expires    int64  `json:"expires,omitempty"`
	Message    string `json:"message,omitempty"`
}

func (c *authCmd) check(ctx context.Context) int {
	r := c.checkResult(ctx)
	if c.flags["--json"] != "" {
		data, _ := json.Marshal(r)
		fmt.Fprintln(c.stdio.Stdout, string(data))
	} else {
		line := r.Status
		if r.Provider != "" {
			line += " " + r.Provider
		}
		if r.Message != "" {
			line += ": " + r.Message
		}
		fmt.Fprintln(c.stdio.Stdout, line)
	}
	switch r.Status {
	case "ready":
		return 0
	case "not_ready":
		return 1
	}
	return 2
}

func (c *authCmd) checkResult(ctx context.Context) checkResult {
	provider := c.flags["--provider"]
	var model string
	if m := c.flags["--model"]; m != "" {
		found, err := c.reg.Resolve(provider, m)
		if err != nil {
			return checkResult{Status: "invalid", Provider: provider, Message: err.Error()}
		}
		provider, model = found.Provider, found.ID
	}
	st := c.env.settings
	if provider == "" && st.DefaultProvider() != "" {
		provider, model = st.DefaultProvider(), st.DefaultModel()
	}
	if provider == "" {
		for _, name := range defaultProviders {
			if _, ok := c.reg.Key(name); ok {
				provider = name
				break
			}
		}
	}
	if provider == "" {
		return checkResult{Status: "not_ready", Credential: "none", Message: "no provider has a key or login; run pisces auth login"}
	}
	r := checkResult{Provider: provider, Model: model}
	if _, ok := c.reg.Provider(provider); !ok {
		r.Status, r.Message = "invalid", fmt.Sprintf("unknown provider %q", provider)
		return r
	}
	cred, err := c.store.Get(ctx, provider)
	if err != nil {
		r.Status, r.Credential, r.Message = "invalid", "auth.json", err.Error()
		return r
	}
	if cred.IsOAuth() {
		r.Credential = "oauth"
		if c.flags["--no-refresh"] != "" {
			r.Expires = cred.Expires
			if time.Now().UnixMilli() >= cred.Expires {
				r.Status, r.Message = "not_ready", "the login's token has expired (a run refreshes it)"
			} else {
				r.Status, r.Message = "ready", "logged in, "+expiryText(cred.Expires)
			}
			return r
		}
		fresh, err := c.store.Token(ctx, provider, 0)
		if err != nil {
			r.Status, r.Message = "invalid", err.Error()
			return r
		}
		r.Expires = fresh.Expires
		r.Status, r.Message = "ready", "logged in, "+expiryText(fresh.Expires)
		return r
	}
	if key, ok := c.reg.Key(provider); ok {
		switch {
		case c.reg.HasAPIKeyOverride(provider):
			r.Credential = "--api-key"
		case cred != nil:
			r.Credential = "api_key"
		case fromEnv(key, c.reg.KeyVariables(provider)):
			r.Credential = "environment"
		default:
			r.Credential = "models.json"
		}
		r.Status, r.Message = "ready", "has a key ("+r.Credential+")"
		return r
	}
	r.Status, r.Credential = "not_ready", "none"
	r.Message = c.reg.MissingKeyError(provider).Error()
	return r
}

func (c *authCmd) printBearer(ctx context.Context) int {
	p := c.flags["--provider"]
	if p == "" {
		c.errorf("--provider is required")
		return 2
	}
	minExp := 30 * time.Minute
	if v := c.flags["--min-expiry"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			c.errorf("--min-expiry: %q is not a duration such as 30m or 2h", v)
			return 2
		}
		minExp = d
	}
	cred, err := c.store.Token(ctx, p, minExp)
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	if !cred.IsOAuth() {
		c.errorf("%s has no OAuth login stored (log in with pisces auth login %s; print-api-key prints other keys)", p, p)
		return 1
	}
	fmt.Fprintln(c.stdio.Stdout, cred.Access)
	return 0
}

func (c *authCmd) printAPIKey(ctx context.Context) int {
	p := c.flags["--provider"]
	if p == "" {
		c.errorf("--provider is required")
		return 2
	}
	if _, ok := c.reg.Provider(p); !ok {
		c.errorf("unknown provider %q", p)
		return 2
	}
	key, err := c.reg.ResolveKey(ctx, p, 0)
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	fmt.Fprintln(c.stdio.Stdout, key)
	return 0
}

// lineReader hands out stdin's lines to prompts; a prompt whose context
// ends gives up without losing the next line.
type lineReader struct {
	lines chan string
	err   error
	once  sync.Once
	r     io.Reader
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: r, lines: make(chan string)} }

func (l *lineReader) next(ctx context.Context) (string, error) {
	l.once.Do(func() {
		go func() {
			sc := bufio.NewScanner(l.r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				l.lines <- sc.Text()
			}
			l.err = sc.Err()
			if l.err == nil {
				l.err = io.EOF
			}
			close(l.lines)
		}()
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case line, ok := <-l.lines:
		if !ok {
			return "", l.err
		}
		return line, nil
	}
}

// openBrowser opens u in the user's browser when there is one: $BROWSER,
// else the system's opener (on Linux only with a display). Failures are
// silent: the address is printed anyway.
func openBrowser(u string) {
	var cmd *exec.Cmd
	switch b := os.Getenv("BROWSER"); {
	case b != "":
		cmd = exec.Command(b, u)
	case runtime.GOOS == "darwin":
		cmd = exec.Command("open", u)
	case runtime.GOOS == "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	case os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "":
		cmd = exec.Command("xdg-open", u)
	default:
		return
	}
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// fromEnv reports whether key is the value of one of the variables.
func fromEnv(key string, vars []string) bool {
	for _, v := range vars {
		if key != "" && os.Getenv(v) == key {
			return true
		}
	}
	return false
}

// deviceID returns the global settings' deviceId (Sign in with ChatGPT
// names the installation by it, as pi does), writing a new random UUID
// into settings.json, in place, when there is none.
func deviceID(st *settings.Settings) func() (string, error) {
	return func() (string, error) {
		if v := st.String("deviceId", ""); v != "" {
			return v, nil
		}
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		if err := st.Set(settings.Global, "deviceId", id); err != nil {
			return "", err
		}
		return id, nil
	}
}
