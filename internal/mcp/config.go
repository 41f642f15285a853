// Package mcp is the Model Context Protocol client: it reads pi 1.5's
// mcp.json files, connects their servers (stdio and streamable HTTP,
// through the official Go SDK) in the background, and offers their tools
// to a session under pi's names (mcp__<server>__<tool>) with pi's exposure
// modes: direct, deferred (found through tool_search), codemode and
// hidden. docs/mcp.md describes the format and the behaviour.
package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// Exposure modes of a server or a tool.
const (
	ExposureCodemode = "codemode"
	ExposureDeferred = "deferred"
	ExposureDirect   = "direct"
	ExposureHidden   = "hidden"
)

// Scopes: where a server's entry comes from.
const (
	ScopeGlobal  = "global"  // <agentDir>/mcp.json
	ScopeProject = "project" // <cwd>/.pi/mcp.json, <cwd>/.pisces/mcp.json
	ScopeFlag    = "flag"    // --mcp-config FILE
	// ScopeSession: a server a client gave for one session (an ACP
	// editor's mcpServers); it belongs to that session alone.
	ScopeSession = "session"
)

// FileName is the configuration file's name in the agent dir and in a
// project's .pi/ and .pisces/ directories.
const FileName = "mcp.json"

// DefaultTimeout bounds a server's connection (and the first prompt's wait
// for it) when its entry gives no timeout.
const DefaultTimeout = 60 * time.Second

// ServerConfig is one entry of mcpServers.
type ServerConfig struct {
	Name  string
	Scope string
	File  string // the file it was read from

	Transport string // "stdio" or "http"
	Command   string
	Args      []string
	Env       [][2]string // in file order; values already expanded
	Cwd       string      // "" = the session's cwd
	URL       string
	Headers   [][2]string // in file order; values already expanded
	OAuth     bool        // an oauth block was given (not supported: connect without it)

	Timeout      time.Duration
	Enabled      bool
	Description  string
	Exposure     string
	ToolExposure []ToolExposure // in file order
}

// ToolExposure maps a tool name or a "*" pattern to an exposure.
type ToolExposure struct {
	Pattern  string
	Exposure string
}

// ExposureOf returns the exposure of the server's tool named name (the
// server's own name): an exact toolExposure entry wins, then the first
// matching pattern, then the server's exposure.
func (c *ServerConfig) ExposureOf(name string) string {
	for _, te := range c.ToolExposure {
		if te.Pattern == name {
			return te.Exposure
		}
	}
	for _, te := range c.ToolExposure {
		if strings.Contains(te.Pattern, "*") && globMatch(te.Pattern, name) {
			return te.Exposure
		}
	}
	return c.Exposure
}

// directTools reports whether any of the server's tools may be directly
// exposed (the first prompt waits for such a server).
func (c *ServerConfig) directTools() bool {
	if c.Exposure == ExposureDirect {
		return true
	}
	for _, te := range c.ToolExposure {
		if te.Exposure == ExposureDirect {
			return true
		}
	}
	return false
}

// CommandLine is the server's command line or URL, for listings.
func (c *ServerConfig) CommandLine() string {
	if c.Transport == "http" {
		return c.URL
	}
	return strings.Join(append([]string{c.Command}, c.Args...), " ")
}

// Config is what the mcp.json files say.
type Config struct {
	Servers            []*ServerConfig
	AutoEnableCodemode bool
	// Problems are the entries (or files) that were skipped, each naming
	// the file and what was wrong; the others still load.
	Problems []string
}

// Find returns the server named name (nil when none).
func (c *Config) Find(name string) *ServerConfig {
	for _, s := range c.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Files are the configuration files to read, in order; a later file's
// server of the same name replaces an earlier one.
type Files struct {
	AgentDir string   // <agentDir>/mcp.json
	Project  string   // the project directory ("" when untrusted: not read)
	Extra    []string // --mcp-config files
}

// ProjectFiles returns the project's configuration files, in the order
// they are read (.pisces/ wins over .pi/ per server name).
func ProjectFiles(cwd string) []string {
	return []string{filepath.Join(cwd, ".pi", FileName), filepath.Join(cwd, ".pisces", FileName)}
}

// HasProjectConfig reports whether cwd has a project mcp.json (a reason to
// ask the trust question).
func HasProjectConfig(cwd string) bool {
	for _, f := range ProjectFiles(cwd) {
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// Load reads the files. A missing file is no problem; an unreadable or
// malformed one is reported and skipped.
func Load(f Files) *Config {
	cfg := &Config{}
	add := func(path, scope string) {
		data, err := os.ReadFile(path)
		if err != nil {
			if !os.IsNotExist(err) {
				cfg.Problems = append(cfg.Problems, fmt.Sprintf("%s: %v", path, err))
			}
			return
		}
		parseInto(cfg, data, path, scope)
	}
	if f.AgentDir != "" {
		add(filepath.Join(f.AgentDir, FileName), ScopeGlobal)
	}
	if f.Project != "" {
		for _, p := range ProjectFiles(f.Project) {
			add(p, ScopeProject)
		}
	}
	for _, p := range f.Extra {
		add(p, ScopeFlag)
	}
	return cfg
}

// Parse reads one file's contents into a Config (for tests and the mcp
// subcommand).
func Parse(data []byte, path, scope string) *Config {
	cfg := &Config{}
	parseInto(cfg, data, path, scope)
	return cfg
}

var validName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) }}

func parseInto(cfg *Config, data []byte, path, scope string) {
	data = stripComments(data)
	var top struct {
		MCPServers         json.RawMessage `json:"mcpServers"`
		AutoEnableCodemode *bool           `json:"autoEnableCodemode"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		cfg.Problems = append(cfg.Problems, fmt.Sprintf("%s: %s", path, jsonx.PlainError(data, err)))
		return
	}
	if top.AutoEnableCodemode != nil {
		cfg.AutoEnableCodemode = *top.AutoEnableCodemode
	}
	if len(top.MCPServers) == 0 || string(top.MCPServers) == "null" {
		return
	}
	entries, err := orderedObject(top.MCPServers)
	if err != nil {
		cfg.Problems = append(cfg.Problems, fmt.Sprintf("%s: mcpServers must be an object", path))
		return
	}
	for _, e := range entries {
		sc, err := parseServer(e.key, e.value, path, scope)
		if err != nil {
			cfg.Problems = append(cfg.Problems, fmt.Sprintf("%s: server %q: %v (skipped)", path, e.key, err))
			continue
		}
		replaced := false
		for i, old := range cfg.Servers {
			if old.Name == sc.Name {
				cfg.Servers[i] = sc
				replaced = true
			}
		}
		if !replaced {
			cfg.Servers = append(cfg.Servers, sc)
		}
	}
}

type rawServer struct {
	Type         string          `json:"type"`
	Command      json.RawMessage `json:"command"`
	Args         []string        `json:"args"`
	Env          json.RawMessage `json:"env"`
	Cwd          string          `json:"cwd"`
	URL          string          `json:"url"`
	Headers      json.RawMessage `json:"headers"`
	OAuth        json.RawMessage `json:"oauth"`
	Timeout      *float64        `json:"timeout"`
	Enabled      *bool           `json:"enabled"`
	Description  string          `json:"description"`
	Exposure     string          `json:"exposure"`
	ToolExposure json.RawMessage `json:"toolExposure"`
}

func parseServer(name string, raw json.RawMessage, path, scope string) (*ServerConfig, error) {
	if !validName.Get().MatchString(name) {
		return nil, fmt.Errorf("invalid name: use only letters, digits, _ and -")
	}
	var r rawServer
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s", jsonx.PlainError(raw, err))
	}
	sc := &ServerConfig{Name: name, Scope: scope, File: path, Args: r.Args, Description: r.Description, Enabled: true}
	if r.Enabled != nil {
		sc.Enabled = *r.Enabled
	}
	sc.Timeout = DefaultTimeout
	if r.Timeout != nil {
		if *r.Timeout <= 0 {
			return nil, fmt.Errorf("timeout must be a positive number of seconds")
		}
		sc.Timeout = time.Duration(*r.Timeout * float64(time.Second))
	}
	var command string
	if len(r.Command) > 0 && string(r.Command) != "null" {
		if err := json.Unmarshal(r.Command, &command); err != nil {
			return nil, fmt.Errorf("command must be one executable (a string); put its arguments in args")
		}
	}
	switch r.Type {
	case "":
		switch {
		case command != "" && r.URL != "":
			return nil, fmt.Errorf("give either command or url, not both")
		case command != "":
			sc.Transport = "stdio"
		case r.URL != "":
			sc.Transport = "http"
		default:
			return nil, fmt.Errorf("needs command (stdio) or url (streamable HTTP)")
		}
	case "stdio":
		sc.Transport = "stdio"
	case "http", "streamable-http", "streamableHttp":
		sc.Transport = "http"
	case "sse":
		return nil, fmt.Errorf("type \"sse\" (the old HTTP+SSE transport) is not supported; use a streamable HTTP endpoint")
	default:
		return nil, fmt.Errorf("unknown type %q (stdio, http or streamable-http)", r.Type)
	}
	if sc.Transport == "stdio" {
		if command == "" {
			return nil, fmt.Errorf("a stdio server needs command")
		}
		sc.Command = command
		if r.Cwd != "" {
			sc.Cwd = expandHome(r.Cwd)
		}
		env, err := stringMap(r.Env, "env")
		if err != nil {
			return nil, err
		}
		for i := range env {
			v, err := expandValue(env[i][1])
			if err != nil {
				return nil, fmt.Errorf("env %s: %v", env[i][0], err)
			}
			env[i][1] = v
		}
		sc.Env = env
	} else {
		if r.URL == "" {
			return nil, fmt.Errorf("an HTTP server needs url")
		}
		if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
			return nil, fmt.Errorf("url must start with http:// or https://")
		}
		sc.URL = r.URL
		h, err := stringMap(r.Headers, "headers")
		if err != nil {
			return nil, err
		}
		for i := range h {
			v, err := expandValue(h[i][1])
			if err != nil {
				return nil, fmt.Errorf("header %s: %v", h[i][0], err)
			}
			h[i][1] = v
		}
		sc.Headers = h
		sc.OAuth = len(r.OAuth) > 0 && string(r.OAuth) != "null" && string(r.OAuth) != "false"
	}
	exp, err := exposure(r.Exposure)
	if err != nil {
		return nil, err
	}
	if exp == "" {
		exp = ExposureCodemode
	}
	sc.Exposure = exp
	if len(r.ToolExposure) > 0 && string(r.ToolExposure) != "null" {
		te, err := stringMap(r.ToolExposure, "toolExposure")
		if err != nil {
			return nil, err
		}
		for _, kv := range te {
			e, err := exposure(kv[1])
			if err != nil || e == "" {
				return nil, fmt.Errorf("toolExposure %q: unknown exposure %q (codemode, deferred, direct or hidden)", kv[0], kv[1])
			}
			sc.ToolExposure = append(sc.ToolExposure, ToolExposure{Pattern: kv[0], Exposure: e})
		}
	}
	return sc, nil
}

func exposure(s string) (string, error) {
	switch s {
	case "", ExposureCodemode, ExposureDeferred, ExposureDirect, ExposureHidden:
		return s, nil
	case "codemode-deferred":
		return ExposureCodemode, nil
	}
	return "", fmt.Errorf("unknown exposure %q (codemode, deferred, direct or hidden)", s)
}

type kv struct {
	key   string
	value json.RawMessage
}

// orderedObject returns an object's members in file order.
func orderedObject(raw json.RawMessage) ([]kv, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not an object")
	}
	var out []kv
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, kv{tok.(string), v})
	}
	return out, nil
}

// stringMap reads an object of strings in file order.
func stringMap(raw json.RawMessage, what string) ([][2]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	members, err := orderedObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s must be an object of strings", what)
	}
	out := make([][2]string, 0, len(members))
	for _, m := range members {
		var s string
		if err := json.Unmarshal(m.value, &s); err != nil {
			return nil, fmt.Errorf("%s %q must be a string", what, m.key)
		}
		out = append(out, [2]string{m.key, s})
	}
	return out, nil
}

var varRef = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) }}

// expandValue expands an env or headers value: "!command" is the command's
// standard output (trimmed), "${VAR}" references are replaced by the
// environment's values (empty when unset); anything else is literal.
func expandValue(v string) (string, error) {
	if cmd, ok := strings.CutPrefix(v, "!"); ok {
		out, err := exec.Command("/bin/sh", "-c", cmd).Output()
		if err != nil {
			return "", fmt.Errorf("command %q failed: %v", cmd, err)
		}
		return strings.TrimRight(string(out), "\r\n"), nil
	}
	return varRef.Get().ReplaceAllStringFunc(v, func(m string) string {
		return os.Getenv(m[2 : len(m)-1])
	}), nil
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// globMatch matches name against a pattern in which "*" stands for any
// characters.
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return len(parts) == 1 && name == "" || len(parts) > 1 && strings.HasSuffix(name, last)
}

// stripComments removes // and /* */ comments outside strings (mcp.json
// files are edited by hand; pi's own are plain JSON).
func stripComments(data []byte) []byte {
	if !bytes.Contains(data, []byte("/")) {
		return data
	}
	out := make([]byte, 0, len(data))
	inStr := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out = append(out, c)
			if c == '\\' && i+1 < len(data) {
				i++
				out = append(out, data[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
		} else if c == '/' && i+1 < len(data) && data[i+1] == '/' {
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
			continue
		} else if c == '/' && i+1 < len(data) && data[i+1] == '*' {
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			i += end + 3
			out = append(out, ' ')
			continue
		}
		out = append(out, c)
	}
	return out
}

// ToolName is pi's name of a server's tool: mcp__<server>__<tool>, every
// character outside [A-Za-z0-9_] turned into _.
func ToolName(server, tool string) string {
	return "mcp__" + sanitize(server) + "__" + sanitize(tool)
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
