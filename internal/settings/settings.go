// Package settings reads and writes Pisces settings: the global file
// <agentDir>/settings.json and the project file <cwd>/.pisces/settings.json.
//
// Both files are JSON with // and /* */ comments and trailing commas allowed.
// The project file is deep-merged over the global one: objects merge key by
// key, while arrays and all other values replace. A top-level key containing
// dots ("task.budget.maxCostUsd": 5) means the same as the nested object
// ({"task": {"budget": {"maxCostUsd": 5}}}). Only top-level keys are split, so
// keys deeper down that legitimately contain dots (model ids such as
// "gpt-4.1" under modelThinkingLevels) are left alone.
//
// Keys follow pi's settings-manager where pi has them (defaultProvider,
// defaultModel, defaultThinkingLevel, steeringMode, followUpMode, compaction,
// branchSummary, retry, shellPath, shellCommandPrefix, enabledModels,
// defaultTools, extensions, sessionDir), so a pi agent dir can be shared.
//
// Writing (Set) edits the file text in place: only the bytes of the one
// value that changes are replaced (or one member is inserted or removed), so
// comments, blank lines, key order, dotted top-level keys and the layout of
// everything else stay as they were. A new member goes right after the last
// member of the innermost object on its path that the file already has
// (comments on lines of their own before the closing brace stay last),
// indented like its siblings; a missing or empty file is written in the
// layout of JSON.stringify(settings, null, 2). Only when no in-place edit
// reads back as the intended settings is the file rewritten as plain JSON
// (see Set).
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/pisces-agent/pisces/internal/fsx"
)

// Scope selects which settings file Set writes.
type Scope int

const (
	// Global is <agentDir>/settings.json.
	Global Scope = iota
	// Project is <cwd>/.pisces/settings.json.
	Project
)

func (s Scope) String() string {
	switch s {
	case Global:
		return "global"
	case Project:
		return "project"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// FileName is the name of a settings file; ProjectDirName is the directory
// in the project that holds the project settings file.
const (
	FileName       = "settings.json"
	ProjectDirName = ".pisces"
)

// Defaults, as in pi.
const (
	DefaultThinkingLevelValue      = "medium"
	DefaultQueueMode               = "one-at-a-time"
	DefaultInterruptMode           = "immediate"
	DefaultReserveTokens           = 16384
	DefaultKeepRecentTokens        = 20000
	DefaultBranchSummaryReserve    = 16384
	DefaultRetryMaxRetries         = 3
	DefaultRetryBaseDelayMs        = 2000
	DefaultRetryMaxDelayMs         = 60000
	DefaultCompactionEnabledValue  = true
	DefaultRetryEnabledValue       = true
	defaultSettingsFilePermissions = 0o644
)

// Settings is the merged view of the global and project settings. It is safe
// for concurrent use.
type Settings struct {
	mu          sync.RWMutex
	globalPath  string // empty when there is no agent dir
	projectPath string // empty when there is no cwd
	global      map[string]any
	project     map[string]any
	merged      map[string]any
}

// Load reads <agentDir>/settings.json and <cwd>/.pisces/settings.json. Either
// directory may be empty, and a missing file counts as an empty one.
//
// A file that cannot be parsed gives a *FileError naming the file, line and
// column. Load then still returns a usable *Settings in which that file
// counts as empty, so a caller may choose to warn and go on; Set refuses to
// overwrite a file it cannot parse, so the broken file is never reset.
func Load(agentDir, cwd string) (*Settings, error) {
	s := &Settings{}
	if agentDir != "" {
		s.globalPath = filepath.Join(agentDir, FileName)
	}
	if cwd != "" {
		s.projectPath = filepath.Join(cwd, ProjectDirName, FileName)
	}
	err := s.Reload()
	return s, err
}

// Reload reads both files again. On error the files that did parse are still
// used and the others count as empty.
func (s *Settings) Reload() error {
	g, gerr := readFile(s.globalPath)
	p, perr := readFile(s.projectPath)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.global, s.project = g, p
	s.remerge()
	return errors.Join(gerr, perr)
}

// Path returns the file of a scope ("" when the scope has no directory).
func (s *Settings) Path(scope Scope) string {
	if scope == Project {
		return s.projectPath
	}
	return s.globalPath
}

func (s *Settings) remerge() {
	s.merged = deepMerge(deepMerge(map[string]any{}, s.global), s.project)
}

// readFile returns the expanded contents of a settings file, an empty map
// when path is empty or the file does not exist.
func readFile(path string) (map[string]any, error) {
	_, m, err := readFileData(path)
	return m, err
}

// readFileData is readFile that also returns the bytes read (nil when there
// is no file).
func readFileData(path string) ([]byte, map[string]any, error) {
	if path == "" {
		return nil, map[string]any{}, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, map[string]any{}, nil
	}
	if err != nil {
		return nil, map[string]any{}, fmt.Errorf("settings: %w", err)
	}
	obj, err := parseObject(data)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.offset)
			return nil, map[string]any{}, &FileError{Path: path, Line: line, Column: col, Err: errors.New(se.msg)}
		}
		return nil, map[string]any{}, &FileError{Path: path, Line: 1, Column: 1, Err: err}
	}
	return data, expandDotted(obj), nil
}

// expandDotted turns top-level dotted keys into nested objects. Plain keys
// are applied first, then dotted keys in sorted order, each deep-merged in.
func expandDotted(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	var dotted []string
	for k, v := range m {
		if strings.Contains(k, ".") {
			dotted = append(dotted, k)
			continue
		}
		out[k] = v
	}
	sort.Strings(dotted)
	for _, k := range dotted {
		parts := strings.Split(k, ".")
		if !validPath(parts) {
			out[k] = m[k] // "a..b", ".a": keep as a literal key
			continue
		}
		var v any = m[k]
		for i := len(parts) - 1; i > 0; i-- {
			v = map[string]any{parts[i]: v}
		}
		out = deepMerge(out, map[string]any{parts[0]: v})
	}
	return out
}

func validPath(parts []string) bool {
	for _, p := range parts {
		if p == "" {
			return false
		}
	}
	return len(parts) > 0
}

// deepMerge merges src into dst (which it modifies and returns): objects
// merge recursively, anything else in src replaces. Values from src are
// copied so dst never shares maps or slices with src.
func deepMerge(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		if sm, ok := sv.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = deepMerge(dm, sm)
				continue
			}
		}
		dst[k] = deepCopy(sv)
	}
	return dst
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// Raw returns a deep copy of the merged settings.
func (s *Settings) Raw() map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return deepCopy(s.merged).(map[string]any)
}

// Get returns the merged value at a dotted path ("compaction.enabled").
// Numbers are json.Number when read from a file. The result is a copy.
func (s *Settings) Get(path string) (any, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := lookup(s.merged, path)
	return deepCopy(v), ok
}

func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Set stores value at a dotted path in the file of scope and writes that
// file atomically (a fresh temporary file beside it, then a rename,
// permissions kept; a file that is a symbolic link has its target replaced
// and stays a link), creating the directory if needed. The file is read
// again first, so keys written by someone else meanwhile are kept; if it
// cannot be parsed, Set fails and leaves it alone. A nil value removes the
// key. The value must be encodable as JSON; it is written as json.Marshal
// writes it (without HTML escaping), indented to fit where it goes.
//
// The file is edited in place (see the package doc). Where the path is
// already in the file, the member reading takes its value from is changed:
// with both "task": {"budget": {"maxCostUsd": 1}} and a dotted
// "task.budget.maxCostUsd": 5, the dotted key wins on reading, so it is the
// one updated. A missing key is inserted into the innermost object along the
// path that the file has (a file made of dotted keys gets another dotted
// key). Removing deletes every member that stands for the path, shadowed
// ones included, so no older value resurfaces; removing an absent key
// writes nothing.
//
// The edited text is parsed again and must give exactly the settings the
// change should give (the old ones with this one path changed). If it does
// not — say another member of the file would still merge into the new
// value — the other members standing for the path are removed and the edit
// is tried again; if that still does not give the right settings, the whole
// file is rewritten as plain indented JSON, which loses its comments but
// never writes something wrong.
func (s *Settings) Set(scope Scope, path string, value any) error {
	file := s.Path(scope)
	if file == "" {
		return fmt.Errorf("settings: no %s settings file (no directory was given)", scope)
	}
	parts := strings.Split(path, ".")
	if !validPath(parts) {
		return fmt.Errorf("settings: invalid key %q", path)
	}
	// Normalize the value to the shapes a file read produces.
	var norm any
	if value != nil {
		b, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("settings: %s: %w", path, err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&norm); err != nil {
			return fmt.Errorf("settings: %s: %w", path, err)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	data, cur, err := readFileData(file)
	if err != nil {
		return err
	}
	want := deepCopy(cur).(map[string]any)
	setPath(want, parts, norm, value == nil)
	out, got, ok := editText(data, parts, norm, value == nil, want)
	if !ok {
		// No in-place edit gave the right settings: rewrite the file.
		if out, err = encodeFile(want); err != nil {
			return fmt.Errorf("settings: encode %s: %w", file, err)
		}
		got = want
	}
	if data == nil || !bytes.Equal(out, data) {
		if data != nil || len(out) > 0 {
			if err := writeAtomic(file, out); err != nil {
				return err
			}
		}
	}
	if scope == Project {
		s.project = got
	} else {
		s.global = got
	}
	s.remerge()
	return nil
}

func setPath(m map[string]any, parts []string, v any, remove bool) {
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			if remove {
				return
			}
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	last := parts[len(parts)-1]
	if remove {
		delete(m, last)
		return
	}
	m[last] = v
}

// encodeFile returns settings as a whole file: indented JSON, keys sorted,
// no HTML escaping, a final newline.
func encodeFile(v map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeAtomic replaces the settings file at path with data (fsx.WriteFile:
// a settings file that is a symbolic link, into a dotfiles repository say,
// has its target replaced and stays a link; the permissions of an existing
// file are kept).
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := fsx.WriteFile(path, data, defaultSettingsFilePermissions); err != nil {
		return fmt.Errorf("settings: write %s: %w", path, err)
	}
	return nil
}

// SetProject switches the project settings file to <cwd>/.pisces/settings.json
// ("" ignores project settings, as for an untrusted project) and reloads.
func (s *Settings) SetProject(cwd string) error {
	s.mu.Lock()
	if cwd == "" {
		s.projectPath = ""
	} else {
		s.projectPath = filepath.Join(cwd, ProjectDirName, FileName)
	}
	s.mu.Unlock()
	return s.Reload()
}
