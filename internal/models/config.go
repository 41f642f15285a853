package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// modelsFile is pi's models.json.
type modelsFile struct {
	Providers map[string]*providerConfig `json:"providers"`
}

type providerConfig struct {
	BaseURL        string                    `json:"baseUrl"`
	API            string                    `json:"api"`
	APIKey         string                    `json:"apiKey"`
	Headers        map[string]string         `json:"headers"`
	AuthHeader     bool                      `json:"authHeader"`
	Compat         json.RawMessage           `json:"compat"`
	Models         []*modelConfig            `json:"models"`
	ModelOverrides map[string]*modelOverride `json:"modelOverrides"`
}

type costConfig struct {
	Input      *float64 `json:"input"`
	Output     *float64 `json:"output"`
	CacheRead  *float64 `json:"cacheRead"`
	CacheWrite *float64 `json:"cacheWrite"`
}

type modelConfig struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	API           string            `json:"api"`
	Reasoning     *bool             `json:"reasoning"`
	Input         []string          `json:"input"`
	ContextWindow *int              `json:"contextWindow"`
	MaxTokens     *int              `json:"maxTokens"`
	Cost          *costConfig       `json:"cost"`
	Headers       map[string]string `json:"headers"`
	Compat        json.RawMessage   `json:"compat"`
	// ThinkingLevelMap (pi ≥ 0.80): a non-null entry for "xhigh" or "max"
	// enables that level on the model.
	ThinkingLevelMap map[string]*string `json:"thinkingLevelMap"`
}

type modelOverride struct {
	Name          *string           `json:"name"`
	Reasoning     *bool             `json:"reasoning"`
	Input         []string          `json:"input"`
	ContextWindow *int              `json:"contextWindow"`
	MaxTokens     *int              `json:"maxTokens"`
	Cost          *costConfig       `json:"cost"`
	Headers       map[string]string `json:"headers"`
	Compat        json.RawMessage   `json:"compat"`
}

// readModelsFile reads and parses models.json. A missing file is not an
// error (nil, nil).
func readModelsFile(path string) (*modelsFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var f modelsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %s", path, jsonx.PlainError(data, err))
	}
	return &f, nil
}

// authEntry is one provider of auth.json.
type authEntry struct {
	Type    string `json:"type"` // "api_key" or "oauth"
	Key     string `json:"key"`
	Access  string `json:"access"`
	Expires int64  `json:"expires"` // Unix ms; 0 = unknown
}

// AuthModeWarning says that auth.json can be read or changed by users
// other than its owner. pi writes the file with mode 0600; the keys in it
// (and the commands its "!command" values run) are the owner's alone.
type AuthModeWarning struct {
	Path string
	Mode fs.FileMode
}

func (w *AuthModeWarning) Error() string {
	return fmt.Sprintf("%s is open to other users (mode %04o) and holds credentials; restrict it with: chmod 600 %s",
		w.Path, uint32(w.Mode.Perm()), w.Path)
}

// authWarned holds the auth.json paths already warned about: the warning
// is given once per process.
var authWarned struct {
	sync.Mutex
	paths map[string]bool
}

// authModeWarning returns the warning for an auth.json whose mode lets
// other users read or change it, the first time path is seen so; nil
// otherwise (and on Windows, where the mode bits mean nothing).
func authModeWarning(path string, mode fs.FileMode) error {
	if runtime.GOOS == "windows" || mode.Perm()&0o077 == 0 {
		return nil
	}
	authWarned.Lock()
	defer authWarned.Unlock()
	if authWarned.paths[path] {
		return nil
	}
	if authWarned.paths == nil {
		authWarned.paths = map[string]bool{}
	}
	authWarned.paths[path] = true
	return &AuthModeWarning{Path: path, Mode: mode}
}

// readAuthFile reads auth.json. A missing file is not an error. warning is
// an *AuthModeWarning when the file is open to other users (once per path
// and process).
func readAuthFile(path string) (entries map[string]*authEntry, warning, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		warning = authModeWarning(path, fi.Mode())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, warning, fmt.Errorf("%s: %v", path, err)
	}
	entries, err = parseAuth(path, data)
	return entries, warning, err
}

// parseAuth decodes auth.json's entries. An entry of the wrong shape is
// left out and reported with its line and column; the other entries still
// load.
func parseAuth(path string, data []byte) (map[string]*authEntry, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %s", path, jsonx.PlainError(data, err))
	}
	out := map[string]*authEntry{}
	var errs []string
	for _, v := range objectMembers(data) {
		var e authEntry
		if err := json.Unmarshal(v.raw, &e); err != nil {
			off, msg := jsonx.Explain(v.raw, err)
			line, col := jsonx.Position(data, v.start+max(off, 0))
			errs = append(errs, fmt.Sprintf("line %d, column %d: %q: %s", line, col, v.name, msg))
			continue
		}
		if e.Type == "oauth" {
			var shape struct {
				Access  *string  `json:"access"`
				Refresh *string  `json:"refresh"`
				Expires *float64 `json:"expires"`
			}
			_ = json.Unmarshal(v.raw, &shape)
			if shape.Access == nil || shape.Refresh == nil || shape.Expires == nil {
				line, col := jsonx.Position(data, v.start)
				errs = append(errs, fmt.Sprintf("line %d, column %d: %q: an oauth entry needs access, refresh and expires", line, col, v.name))
				continue
			}
		}
		out[v.name] = &e
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s: %s", path, strings.Join(errs, "; "))
	}
	return out, nil
}

// objectMember is one member of a JSON object and where its value starts.
type objectMember struct {
	name  string
	raw   json.RawMessage
	start int
}

// objectMembers lists the members of a valid JSON object in order.
func objectMembers(data []byte) []objectMember {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []objectMember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		end := int(dec.InputOffset())
		out = append(out, objectMember{name: name, raw: raw, start: end - len(raw)})
	}
	return out
}

// resolver resolves models.json and auth.json values: "!command" runs the
// command (its stdout, trimmed; cached), the name of a set environment
// variable gives its value, anything else is the literal.
type resolver struct {
	env     func(string) string
	timeout time.Duration

	mu   sync.Mutex
	cmds map[string]*cmdResult
}

type cmdResult struct {
	once sync.Once
	out  string
	err  error
}

func newResolver(env func(string) string, timeout time.Duration) *resolver {
	if env == nil {
		env = os.Getenv
	}
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	return &resolver{env: env, timeout: timeout, cmds: map[string]*cmdResult{}}
}

// DefaultCommandTimeout bounds a "!command" value.
const DefaultCommandTimeout = 10 * time.Second

func (r *resolver) value(v string) string {
	out, _ := r.valueErr(v)
	return out
}

func (r *resolver) valueErr(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if cmd, ok := strings.CutPrefix(v, "!"); ok {
		return r.command(strings.TrimSpace(cmd))
	}
	if isEnvName(v) {
		if ev := r.env(v); ev != "" {
			return ev, nil
		}
	}
	return v, nil
}

func (r *resolver) command(cmd string) (string, error) {
	if cmd == "" {
		return "", fmt.Errorf("empty command")
	}
	r.mu.Lock()
	res, ok := r.cmds[cmd]
	if !ok {
		res = &cmdResult{}
		r.cmds[cmd] = res
	}
	r.mu.Unlock()
	res.once.Do(func() { res.out, res.err = runCommand(cmd, r.timeout) })
	return res.out, res.err
}

func runCommand(cmd string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Stdin = nil
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.WaitDelay = time.Second
	err := c.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("command %q timed out after %v", cmd, timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("command %q: %v: %s", cmd, err, msg)
		}
		return "", fmt.Errorf("command %q: %v", cmd, err)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// isEnvName reports whether s could name an environment variable.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
