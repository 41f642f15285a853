// Package models knows which providers and models exist and which of them can
// be used (their key resolves).
package models

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/pisces-agent/pisces/internal/ai"
)

// ProviderEntry is one provider with its models.
type ProviderEntry struct {
	Name     string
	Provider ai.Provider
	Models   []*ai.Model
	// KeyFunc resolves the provider's API key ("" when none). NoKey marks
	// providers that need none (local servers, the scripted provider).
	KeyFunc func() string
	NoKey   bool
}

// Registry holds providers by name. It is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]*ProviderEntry
	order     []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{providers: map[string]*ProviderEntry{}} }

// Add registers (or replaces) a provider.
func (r *Registry) Add(p *ProviderEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.providers[p.Name]; !ok {
		r.order = append(r.order, p.Name)
	}
	r.providers[p.Name] = p
}

// Provider returns the provider entry by name.
func (r *Registry) Provider(name string) (*ProviderEntry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.providers[name]
	return p, ok
}

// Key returns the API key of a provider and whether it resolves.
func (r *Registry) Key(provider string) (string, bool) {
	p, ok := r.Provider(provider)
	if !ok {
		return "", false
	}
	if p.NoKey {
		return "", true
	}
	if p.KeyFunc == nil {
		return "", false
	}
	k := p.KeyFunc()
	return k, k != ""
}

// All returns every model of every provider, in registration order.
func (r *Registry) All() []*ai.Model {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*ai.Model
	for _, n := range r.order {
		out = append(out, r.providers[n].Models...)
	}
	return out
}

// Available returns the models whose provider key resolves.
func (r *Registry) Available() []*ai.Model {
	var out []*ai.Model
	for _, m := range r.All() {
		if _, ok := r.Key(m.Provider); ok {
			out = append(out, m)
		}
	}
	return out
}

// Find returns the model provider/id.
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
	return nil, false
}

// Resolve finds a model from a --model argument: "provider/id", an exact id,
// or a case-insensitive substring of an id or name. provider, when set,
// restricts the search.
func (r *Registry) Resolve(provider, pattern string) (*ai.Model, error) {
	if p, id, ok := strings.Cut(pattern, "/"); ok && provider == "" {
		if m, ok := r.Find(p, id); ok {
			return m, nil
		}
	}
	var cands []*ai.Model
	for _, m := range r.All() {
		if provider != "" && m.Provider != provider {
			continue
		}
		if m.ID == pattern {
			return m, nil
		}
		cands = append(cands, m)
	}
	low := strings.ToLower(pattern)
	var hits []*ai.Model
	for _, m := range cands {
		if strings.Contains(strings.ToLower(m.ID), low) || strings.Contains(strings.ToLower(m.Name), low) {
			hits = append(hits, m)
		}
	}
	if len(hits) == 0 {
		if provider != "" {
			return nil, fmt.Errorf("model not found: %s/%s", provider, pattern)
		}
		return nil, fmt.Errorf("model not found: %s", pattern)
	}
	// Prefer models whose key resolves, then the shortest id.
	sort.SliceStable(hits, func(i, j int) bool {
		_, ki := r.Key(hits[i].Provider)
		_, kj := r.Key(hits[j].Provider)
		if ki != kj {
			return ki
		}
		return len(hits[i].ID) < len(hits[j].ID)
	})
	return hits[0], nil
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

// LevelsFor returns the thinking levels a model supports.
func LevelsFor(m *ai.Model) []string {
	if m == nil || !m.Reasoning {
		return []string{"off"}
	}
	out := []string{"off", "minimal", "low", "medium", "high"}
	for _, extra := range []string{"xhigh", "max"} {
		for _, e := range m.ExtraThinkingLevels {
			if e == extra {
				out = append(out, extra)
			}
		}
	}
	return out
}

// Clamp returns the supported level nearest to the requested one: levels
// above it are tried first, then below (as pi does).
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
		return avail[len(avail)-1]
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
	return "off"
}
