package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// readAuthFile reads auth.json. A missing file is not an error. An entry
// of the wrong shape is left out and reported with its line and column;
// the other entries still load.
func readAuthFile(path string) (map[string]*authEntry, error) {
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
