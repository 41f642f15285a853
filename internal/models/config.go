package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
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
		return nil, fmt.Errorf("%s: %s", path, jsonErrorText(data, err))
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

// readAuthFile reads auth.json. A missing file is not an error.
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
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %s", path, jsonErrorText(data, err))
	}
	out := map[string]*authEntry{}
	var errs []string
	for name, v := range raw {
		var e authEntry
		if err := json.Unmarshal(v, &e); err != nil {
			errs = append(errs, fmt.Sprintf("%q: %v", name, err))
			continue
		}
		out[name] = &e
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s: %s", path, strings.Join(errs, "; "))
	}
	return out, nil
}

// jsonErrorText describes a decoding error with its line and column.
func jsonErrorText(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Sprintf("line %d, column %d: %v", line, col, se)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("line %d, column %d: %s: cannot use a JSON %s as %v", line, col, field, te.Value, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		line, col := position(data, int64(len(data)))
		return fmt.Sprintf("line %d, column %d: unexpected end of JSON input", line, col)
	}
	return err.Error()
}

// position turns a byte offset into a 1-based line and column (the column
// counts bytes). A decoder's offset points just past the offending byte.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off > 0 {
		off-- // the offending byte itself
	}
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
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
