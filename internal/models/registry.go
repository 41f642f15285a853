// Package models knows which providers and models exist and which of them can
// be used (their key resolves).
package models

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/lazy"
)

// ProviderEntry is one provider with its models.
type ProviderEntry struct {
	Name     string
	Provider ai.Provider
	// Models are the provider's models; each carries the provider's Name.
	// An entry the registry hands out has them (see build).
	Models []*ai.Model
	// KeyFunc resolves the provider's API key ("" when none). NoKey marks
	// providers that need none (local servers, the scripted provider).
	KeyFunc func() string
	NoKey   bool
	// AnyModel, when set, makes the provider accept model ids it does not
	// list (local servers): it builds the model for such an id.
	AnyModel func(id string) *ai.Model
	// Env names the environment variables the key is read from, in order.
	Env []string

	// build, when set, makes Models the first time the registry needs
	// them (Load gives built-in providers that models.json does not touch
	// one, so that a start-up does not build the whole catalogue).
	build func() []*ai.Model
	once  sync.Once
}

// ensureModels builds the entry's models if they are built lazily.
func (p *ProviderEntry) ensureModels() {
	if p.build != nil {
		p.once.Do(func() { p.Models = p.build() })
	}
}

// Registry holds providers by name. It is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]*ProviderEntry
	order     []string
	overrides map[string]string               // provider ("*": all) -> --api-key
	dynamic   map[string]map[string]*ai.Model // provider -> id -> AnyModel result
	authFile  string                          // auth.json, for messages ("" when none was read)
	auth      *auth.Store                     // auth.json (nil without an agent dir)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		providers: map[string]*ProviderEntry{},
		overrides: map[string]string{},
		dynamic:   map[string]map[string]*ai.Model{},
	}
}

// Add registers (or replaces) a provider.
func (r *Registry) Add(p *ProviderEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.providers[p.Name]; !ok {
		r.order = append(r.order, p.Name)
	}
	r.providers[p.Name] = p
	delete(r.dynamic, p.Name)
}

// Rebuild makes a catalogue provider build its models again on next use
// (a login changed which of them the account may use). Entries handed out
// before keep their models; the registry hands out a fresh entry.
func (r *Registry) Rebuild(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.providers[name]
	if !ok || p.build == nil {
		return
	}
	r.providers[name] = &ProviderEntry{Name: p.Name, Provider: p.Provider, KeyFunc: p.KeyFunc, NoKey: p.NoKey,
		AnyModel: p.AnyModel, Env: p.Env, build: p.build}
	delete(r.dynamic, name)
}

// Refresh takes the providers of next, a registry Load built again (after
// models.json or auth.json changed), in place of r's: whoever holds r sees
// them from now on. r keeps its providers that next lacks (added after
// Load, such as the scripted provider), its --api-key overrides and its
// auth.json store (give Load r.Auth() as LoadOptions.Auth: one store per
// file, whose OAuth refreshes Close waits for).
func (r *Registry) Refresh(next *Registry) {
	next.mu.RLock()
	providers := make(map[string]*ProviderEntry, len(next.providers))
	for k, v := range next.providers {
		providers[k] = v
	}
	order := append([]string(nil), next.order...)
	next.mu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range r.order {
		if _, ok := providers[name]; !ok {
			providers[name] = r.providers[name]
			order = append(order, name)
		}
	}
	r.providers, r.order = providers, order
	r.dynamic = map[string]map[string]*ai.Model{}
}

// Provider returns the provider entry by name.
func (r *Registry) Provider(name string) (*ProviderEntry, bool) {
	r.mu.RLock()
	p, ok := r.providers[name]
	r.mu.RUnlock()
	if ok {
		p.ensureModels()
	}
	return p, ok
}

// Providers returns the provider names, sorted.
func (r *Registry) Providers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := append([]string(nil), r.order...)
	sort.Strings(out)
	return out
}

// SetAPIKeyOverride makes key the API key of provider ("*": every
// provider), ahead of every other source (pi's --api-key). An empty key
// removes the override.
func (r *Registry) SetAPIKeyOverride(provider, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key == "" {
		delete(r.overrides, provider)
		return
	}
	r.overrides[provider] = key
}

// Key returns the API key of a provider and whether it resolves. Keyless
// providers resolve with whatever key they have, possibly "".
func (r *Registry) Key(provider string) (string, bool) {
	r.mu.RLock()
	p, ok := r.providers[provider]
	override := r.overrides[provider]
	if override == "" {
		override = r.overrides["*"]
	}
	r.mu.RUnlock()
	if !ok {
		return "", false
	}
	if override != "" {
		return override, true
	}
	if p.KeyFunc != nil {
		if k := p.KeyFunc(); k != "" {
			return k, true
		}
	}
	return "", p.NoKey
}

// KeyVariable names the environment variable that gives a provider its
// key: the first of its variables ending in _API_KEY, else its first one;
// "" for providers that need no key or read none from the environment.
func (r *Registry) KeyVariable(provider string) string {
	p, ok := r.Provider(provider)
	if !ok || p.NoKey || len(p.Env) == 0 {
		return ""
	}
	for _, v := range p.Env {
		if strings.HasSuffix(v, "_API_KEY") {
			return v
		}
	}
	return p.Env[0]
}

// AuthFile returns the auth.json path for messages, with the home directory
// written as "~" ("" when the registry was built without an agent dir).
func (r *Registry) AuthFile() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return HomeRelative(r.authFile)
}

// MissingKeyError is the error for a provider whose key does not resolve:
// it names what to set, e.g. "No API key for openai: set OPENAI_API_KEY or
// add it to ~/.pisces/agent/auth.json".
func (r *Registry) MissingKeyError(provider string) error {
	var ways []string
	_, login := auth.Lookup(provider)
	if v := r.KeyVariable(provider); v != "" {
		ways = append(ways, "set "+v)
	} else if !login {
		ways = append(ways, "set apiKey for it in models.json")
	}
	if f := r.AuthFile(); f != "" {
		ways = append(ways, "add it to "+f)
	}
	if login {
		ways = append(ways, "log in with `pisces auth login "+provider+"`")
	}
	return fmt.Errorf("No API key for %s: %s", provider, strings.Join(ways, " or "))
}

// HomeRelative writes a path under the home directory as "~/...".
func HomeRelative(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || path == "" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, home); ok && (rest == "" || rest[0] == filepath.Separator) {
		return "~" + filepath.ToSlash(rest)
	}
	return path
}

// All returns every listed model, sorted by provider then id.
func (r *Registry) All() []*ai.Model {
	r.mu.RLock()
	entries := make([]*ProviderEntry, 0, len(r.order))
	for _, n := range r.order {
		entries = append(entries, r.providers[n])
	}
	r.mu.RUnlock()
	var out []*ai.Model
	for _, p := range entries {
		p.ensureModels()
		out = append(out, p.Models...)
	}
	sortModels(out)
	return out
}

// sortModels sorts by provider, then id, keeping the order of equals.
func sortModels(ms []*ai.Model) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Provider != ms[j].Provider {
			return ms[i].Provider < ms[j].Provider
		}
		return ms[i].ID < ms[j].ID
	})
}

// Available returns the models whose provider key resolves (keyless local
// providers included), in All's order.
func (r *Registry) Available() []*ai.Model {
	var out []*ai.Model
	keyed := map[string]bool{}
	for _, m := range r.All() {
		ok, seen := keyed[m.Provider]
		if !seen {
			_, ok = r.Key(m.Provider)
			keyed[m.Provider] = ok
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// Find returns the model provider/id. A provider that accepts any model id
// (a local server) returns a model for an id it does not list.
func (r *Registry) Find(provider, id string) (*ai.Model, bool) {
	p, ok := r.Provider(provider)
	if !ok {
		return nil, false
	}
	for _, m := range p.Models {
		if m.ID == id {
			return m, true
		}
	}
	if m := r.anyModel(p, id); m != nil {
		return m, true
	}
	return nil, false
}

// anyModel returns the (cached) model of an unlisted id, or nil.
func (r *Registry) anyModel(p *ProviderEntry, id string) *ai.Model {
	if p.AnyModel == nil || strings.TrimSpace(id) == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cache := r.dynamic[p.Name]
	if cache == nil {
		cache = map[string]*ai.Model{}
		r.dynamic[p.Name] = cache
	}
	if m := cache[id]; m != nil {
		return m
	}
	m := p.AnyModel(id)
	if m == nil {
		return nil
	}
	cache[id] = m
	return m
}

// Resolve finds a model from a --model argument, as pi does:
//   - "provider/id" (the provider part case-insensitive), falling back to the
//     whole argument as an id (OpenRouter-style ids contain slashes);
//   - an exact id (case-insensitive); the same id on several providers is
//     ambiguous unless exactly one of them has a key;
//   - a glob ("*sonnet*", "anthropic/claude-*") against "provider/id" or id;
//   - a case-insensitive substring of an id or name.
//
// Among several matches, models whose key resolves come first, then aliases
// (ids without a -YYYYMMDD date) over dated ids, then the highest id. A
// provider that accepts any model id (a local server) takes an unknown id as
// is. provider, when set, restricts the search.
func (r *Registry) Resolve(provider, pattern string) (*ai.Model, error) {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return nil, fmt.Errorf("empty model pattern")
	}
	canonical := map[string]string{} // lower-case provider -> name
	r.mu.RLock()
	for _, n := range r.order {
		canonical[strings.ToLower(n)] = n
	}
	r.mu.RUnlock()

	inferred := false
	if provider != "" {
		name, ok := canonical[strings.ToLower(provider)]
		if !ok {
			return nil, fmt.Errorf("unknown provider %q", provider)
		}
		provider = name
		if rest, ok := cutPrefixFold(pattern, provider+"/"); ok {
			pattern = rest
		}
	} else if i := strings.Index(pattern, "/"); i > 0 {
		if name, ok := canonical[strings.ToLower(pattern[:i])]; ok {
			provider, inferred = name, true
		}
	}

	if provider == "" {
		all := r.All()
		if m, err := r.exactAcross(all, pattern); m != nil || err != nil {
			return m, err
		}
		if m := r.match(all, pattern); m != nil {
			return m, nil
		}
		return nil, r.notFound("", pattern, pattern)
	}

	sub := pattern
	if inferred {
		sub = pattern[len(provider)+1:]
	}
	// The provider's models, in All's order; the others are only built
	// when they are needed.
	var cands []*ai.Model
	if p, ok := r.Provider(provider); ok {
		cands = append(cands, p.Models...)
		sortModels(cands)
	}
	if m := r.match(cands, sub); m != nil {
		return m, nil
	}
	if inferred {
		// "openai/gpt-4o" may be an id of another provider (OpenRouter).
		all := r.All()
		if m, err := r.exactAcross(all, pattern); m != nil || err != nil {
			return m, err
		}
		if m := r.match(all, pattern); m != nil {
			return m, nil
		}
	}
	if p, ok := r.Provider(provider); ok && !isGlob(sub) {
		if m := r.anyModel(p, sub); m != nil {
			return m, nil
		}
	}
	return nil, r.notFound(provider, sub, provider+"/"+sub)
}

// ResolveScope returns every model a --models pattern selects: all matches
// of a glob, or the one model Resolve finds.
func (r *Registry) ResolveScope(pattern string) ([]*ai.Model, error) {
	pattern = strings.TrimSpace(pattern)
	if !isGlob(pattern) {
		m, err := r.Resolve("", pattern)
		if err != nil {
			return nil, err
		}
		return []*ai.Model{m}, nil
	}
	var out []*ai.Model
	for _, m := range r.All() {
		if globMatch(pattern, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no models match pattern %q", pattern)
	}
	return out, nil
}

// exactAcross finds an exact id or provider/id (case-insensitive) among all
// models. It errs when the id is on several providers and not exactly one
// of them has a key.
func (r *Registry) exactAcross(all []*ai.Model, ref string) (*ai.Model, error) {
	low := strings.ToLower(ref)
	var hits []*ai.Model
	for _, m := range all {
		if strings.ToLower(m.ID) == low || strings.ToLower(m.Provider+"/"+m.ID) == low {
			hits = append(hits, m)
		}
	}
	switch len(hits) {
	case 0:
		return nil, nil
	case 1:
		return hits[0], nil
	}
	var keyed []*ai.Model
	var names []string
	for _, m := range hits {
		if _, ok := r.Key(m.Provider); ok {
			keyed = append(keyed, m)
		}
		names = append(names, m.Provider+"/"+m.ID)
	}
	if len(keyed) == 1 {
		return keyed[0], nil
	}
	sort.Strings(names)
	return nil, fmt.Errorf("model %q is ambiguous across providers: %s; use --provider or provider/model", ref, strings.Join(names, ", "))
}

// match picks the best of cands for pattern: an exact id, else glob or
// substring matches ranked by best().
func (r *Registry) match(cands []*ai.Model, pattern string) *ai.Model {
	low := strings.ToLower(pattern)
	for _, m := range cands {
		if strings.ToLower(m.ID) == low {
			return m
		}
	}
	var hits []*ai.Model
	if isGlob(pattern) {
		for _, m := range cands {
			if globMatch(pattern, m) {
				hits = append(hits, m)
			}
		}
	} else {
		for _, m := range cands {
			if strings.Contains(strings.ToLower(m.ID), low) || strings.Contains(strings.ToLower(m.Name), low) {
				hits = append(hits, m)
			}
		}
	}
	return r.best(hits)
}

var datedID = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`-\d{8}$`) }}

// best ranks matches: key resolves, then alias over dated id, then the
// highest id (pi's "latest").
func (r *Registry) best(hits []*ai.Model) *ai.Model {
	if len(hits) == 0 {
		return nil
	}
	keyed := map[string]bool{}
	for _, m := range hits {
		if _, seen := keyed[m.Provider]; !seen {
			_, keyed[m.Provider] = r.Key(m.Provider)
		}
	}
	sorted := append([]*ai.Model(nil), hits...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if keyed[a.Provider] != keyed[b.Provider] {
			return keyed[a.Provider]
		}
		aa, ba := !datedID.Get().MatchString(a.ID), !datedID.Get().MatchString(b.ID)
		if aa != ba {
			return aa
		}
		al, bl := strings.ToLower(a.ID), strings.ToLower(b.ID)
		if al != bl {
			return al > bl
		}
		return a.Provider < b.Provider
	})
	return sorted[0]
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// globMatch matches a glob, case-insensitively, against "provider/id" or
// the id alone. "*" also crosses "/" (ids such as "openai/gpt-oss-120b").
func globMatch(pattern string, m *ai.Model) bool {
	p := strings.ToLower(pattern)
	return globFold(p, strings.ToLower(m.Provider+"/"+m.ID)) || globFold(p, strings.ToLower(m.ID))
}

// globFold is path.Match where "*" matches any run of characters.
func globFold(pattern, name string) bool {
	// Replace "/" so path.Match's "*" spans it, keeping literal slashes
	// in the pattern meaningful.
	const sep = "\x00"
	ok, err := path.Match(strings.ReplaceAll(pattern, "/", sep), strings.ReplaceAll(name, "/", sep))
	return err == nil && ok
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// Thinking levels in increasing order.
var ThinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh", "max"}

// ValidThinkingLevel reports whether s is a known level.
func ValidThinkingLevel(s string) bool {
	for _, l := range ThinkingLevels {
		if l == s {
			return true
		}
	}
	return false
}

// LevelsFor returns the thinking levels a model supports: "off" only
// without reasoning, else off..high plus the model's xhigh/max.
func LevelsFor(m *ai.Model) []string {
	if m == nil || !m.Reasoning {
		return []string{"off"}
	}
	out := []string{"off", "minimal", "low", "medium", "high"}
	for _, extra := range []string{"xhigh", "max"} {
		for _, e := range m.ExtraThinkingLevels {
			if e == extra {
				out = append(out, extra)
				break
			}
		}
	}
	return out
}

// Clamp returns the supported level nearest to the requested one: levels
// above it are tried first, then below (as pi does). An unknown level
// gives the lowest supported level.
func Clamp(m *ai.Model, level string) string {
	avail := LevelsFor(m)
	has := func(l string) bool {
		for _, a := range avail {
			if a == l {
				return true
			}
		}
		return false
	}
	if has(level) {
		return level
	}
	idx := -1
	for i, l := range ThinkingLevels {
		if l == level {
			idx = i
		}
	}
	if idx < 0 {
		return avail[0]
	}
	for i := idx + 1; i < len(ThinkingLevels); i++ {
		if has(ThinkingLevels[i]) {
			return ThinkingLevels[i]
		}
	}
	for i := idx - 1; i >= 0; i-- {
		if has(ThinkingLevels[i]) {
			return ThinkingLevels[i]
		}
	}
	return avail[0]
}
