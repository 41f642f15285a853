package models

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/auth"
)

// LoadOptions configures Load.
type LoadOptions struct {
	// AgentDir holds models.json and auth.json ("" reads neither).
	AgentDir string
	// APIKeyOverride is the --api-key value. It applies to OverrideProvider,
	// or to every provider when OverrideProvider is empty. After resolving
	// the model a caller may narrow it with Registry.SetAPIKeyOverride.
	APIKeyOverride   string
	OverrideProvider string
	// Providers returns the adapter of a wire API (nil when there is none).
	// Models whose API has no adapter are skipped with an error. A nil
	// Providers registers every provider without an adapter (listing only).
	Providers func(api string) ai.Provider
	// Env looks up environment variables (default os.Getenv).
	Env func(string) string
	// Offline is pi's PI_OFFLINE. Load never uses the network, so it
	// changes nothing today; it is kept for future model discovery.
	Offline bool
	// CommandTimeout bounds each "!command" value (default 10 s).
	CommandTimeout time.Duration
	// Auth is the auth.json store (default: <AgentDir>/auth.json with the
	// options of auth.OptionsFromEnv; none without an AgentDir).
	Auth *auth.Store
}

// Load builds the registry from the embedded catalogue and
// <AgentDir>/models.json, with keys in pi's order: the --api-key override,
// the auth.json entry (whichever type is stored owns the provider; OAuth
// tokens are refreshed when a request is sent), models.json's apiKey, then
// the provider's environment variables.
// The returned errors describe what was skipped, and warnings: an
// *AuthModeWarning when auth.json is open to other users (given once per
// file and process); the registry is always usable.
func Load(opts LoadOptions) (*Registry, []error) {
	env := opts.Env
	if env == nil {
		env = os.Getenv
	}
	res := newResolver(env, opts.CommandTimeout)
	reg := NewRegistry()
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if opts.APIKeyOverride != "" {
		p := opts.OverrideProvider
		if p == "" {
			p = "*"
		}
		reg.SetAPIKeyOverride(p, opts.APIKeyOverride)
	}

	cat, err := Catalogue()
	if err != nil {
		errs = append(errs, err)
	}
	var mf *modelsFile
	store := opts.Auth
	if store == nil && opts.AgentDir != "" {
		ao := auth.OptionsFromEnv()
		ao.CopilotCatalogue = copilotCatalogue()
		store = auth.Open(filepath.Join(opts.AgentDir, "auth.json"), ao)
	}
	reg.auth = store
	if store != nil {
		reg.authFile = store.Path()
	}
	if opts.AgentDir != "" {
		if mf, err = readModelsFile(filepath.Join(opts.AgentDir, "models.json")); err != nil {
			errs = append(errs, err)
		}
		// Read here to report broken entries and a file open to other
		// users; keys are read through the store, which sees the file as
		// other programs change it.
		var warning error
		_, warning, err = readAuthFile(filepath.Join(opts.AgentDir, "auth.json"))
		if warning != nil {
			errs = append(errs, warning)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if mf == nil {
		mf = &modelsFile{}
	}
	mjPath := filepath.Join(opts.AgentDir, "models.json")

	var specs []*providerSpec
	builtin := map[string]bool{}
	for i := range cat {
		cp := &cat[i]
		builtin[cp.Name] = true
		s := &providerSpec{
			name:     cp.Name,
			api:      cp.API,
			baseURL:  cp.BaseURL,
			env:      cp.Env,
			noKey:    cp.Local,
			anyModel: cp.Local,
			compat:   cp.Compat,
		}
		if pc := mf.Providers[cp.Name]; pc != nil {
			for j := range cp.Models {
				s.models = append(s.models, cp.Models[j].model(cp))
			}
			if err := s.apply(pc, res, true); err != nil {
				fail("%s: provider %q: %v", mjPath, cp.Name, err)
			}
		} else {
			// Untouched by models.json: its models are built when the
			// registry first needs them.
			s.catalogue = cp
		}
		specs = append(specs, s)
	}
	var custom []string
	for name := range mf.Providers {
		if !builtin[name] {
			custom = append(custom, name)
		}
	}
	sort.Strings(custom)
	for _, name := range custom {
		pc := mf.Providers[name]
		if pc == nil {
			continue
		}
		if name == "" || strings.ContainsAny(name, "/ \t") {
			fail("%s: provider %q: bad provider name", mjPath, name)
			continue
		}
		if pc.BaseURL == "" {
			fail("%s: provider %q: baseUrl is required", mjPath, name)
			continue
		}
		s := &providerSpec{name: name, api: pc.API, baseURL: pc.BaseURL}
		if ai.IsLoopbackURL(pc.BaseURL) {
			s.noKey, s.anyModel = true, true
		}
		// A bad model skips that model; the provider keeps the others.
		if err := s.apply(pc, res, false); err != nil {
			fail("%s: provider %q: %v", mjPath, name, err)
		}
		if len(s.models) == 0 && !s.anyModel {
			fail("%s: provider %q: no models", mjPath, name)
			continue
		}
		specs = append(specs, s)
	}

	for _, s := range specs {
		entry, err := s.entry(opts.Providers, reg, res, env)
		for _, e := range err {
			errs = append(errs, e)
		}
		if entry != nil {
			reg.Add(entry)
		}
	}
	return reg, errs
}

// copilotCatalogue lists the built-in GitHub Copilot model ids.
func copilotCatalogue() []string {
	var ids []string
	for _, cp := range catalogueData {
		if cp.Name == copilotProvider {
			for _, m := range cp.Models {
				ids = append(ids, m.ID)
			}
		}
	}
	return ids
}

// providerSpec is a provider being assembled from the catalogue and
// models.json.
type providerSpec struct {
	name       string
	api        string
	baseURL    string
	env        []string
	noKey      bool
	anyModel   bool
	compat     json.RawMessage
	headers    map[string]string // resolved
	apiKey     string            // models.json value, unresolved
	authHeader bool
	models     []*ai.Model
	// catalogue, when set, is the built-in provider whose models the
	// entry builds on first use (models is empty then).
	catalogue *CatalogueProvider
}

// modelAPIs is the wire API of each of the spec's models.
func (s *providerSpec) modelAPIs() []string {
	if cp := s.catalogue; cp != nil {
		apis := make([]string, len(cp.Models))
		for i := range cp.Models {
			if apis[i] = cp.Models[i].API; apis[i] == "" {
				apis[i] = cp.API
			}
		}
		return apis
	}
	apis := make([]string, len(s.models))
	for i, m := range s.models {
		apis[i] = m.API
	}
	return apis
}

// apply merges a models.json provider entry. For a built-in provider a
// baseUrl, headers or compat apply to its built-in models too.
func (s *providerSpec) apply(pc *providerConfig, res *resolver, isBuiltin bool) error {
	var problems []string
	if pc.BaseURL != "" {
		if _, err := url.Parse(pc.BaseURL); err != nil {
			return fmt.Errorf("bad baseUrl: %v", err)
		}
		s.baseURL = pc.BaseURL
		for _, m := range s.models {
			m.BaseURL = pc.BaseURL
		}
	}
	if pc.APIKey != "" {
		s.apiKey = pc.APIKey
	}
	if pc.AuthHeader {
		s.authHeader = true
	}
	if len(pc.Compat) > 0 {
		if !isJSONObject(pc.Compat) {
			return fmt.Errorf("compat is not an object")
		}
		s.compat = mergeCompat(s.compat, pc.Compat)
		for _, m := range s.models {
			m.Compat = mergeCompat(m.Compat, pc.Compat)
		}
	}
	if len(pc.Headers) > 0 {
		s.headers = resolveHeaders(pc.Headers, res)
		for _, m := range s.models {
			m.Headers = mergeHeaders(m.Headers, s.headers)
		}
	}
	if pc.API != "" && !isBuiltin {
		s.api = pc.API
	}
	// modelOverrides patch built-in models; unknown ids are ignored.
	ids := make([]string, 0, len(pc.ModelOverrides))
	for id := range pc.ModelOverrides {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		o := pc.ModelOverrides[id]
		if o == nil {
			continue
		}
		for _, m := range s.models {
			if m.ID == id {
				if err := applyOverride(m, o, res); err != nil {
					problems = append(problems, fmt.Sprintf("modelOverrides %q: %v", id, err))
				}
			}
		}
	}
	// models are upserted by id.
	for i, mc := range pc.Models {
		if mc == nil {
			continue
		}
		m, err := s.newModel(mc, pc.API, res)
		if err != nil {
			problems = append(problems, fmt.Sprintf("model %d: %v", i+1, err))
			continue
		}
		replaced := false
		for j, old := range s.models {
			if old.ID == m.ID {
				s.models[j] = m
				replaced = true
			}
		}
		if !replaced {
			s.models = append(s.models, m)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// newModel builds a models.json model with pi's defaults.
func (s *providerSpec) newModel(mc *modelConfig, providerAPI string, res *resolver) (*ai.Model, error) {
	if strings.TrimSpace(mc.ID) == "" {
		return nil, fmt.Errorf("id is required")
	}
	api := mc.API
	if api == "" {
		api = providerAPI
	}
	if api == "" {
		api = s.api
	}
	if api == "" {
		return nil, fmt.Errorf("%q: api is required (on the provider or the model)", mc.ID)
	}
	m := &ai.Model{
		ID:            mc.ID,
		Name:          mc.Name,
		API:           api,
		Provider:      s.name,
		BaseURL:       s.baseURL,
		Input:         []string{"text"},
		ContextWindow: DefaultContextWindow,
		MaxTokens:     DefaultMaxTokens,
		Compat:        mergeCompat(s.compat, mc.Compat),
		Headers:       mergeHeaders(nil, s.headers),
	}
	if m.Name == "" {
		m.Name = m.ID
	}
	if mc.Reasoning != nil {
		m.Reasoning = *mc.Reasoning
	}
	if mc.Input != nil {
		if err := validateInput(mc.Input); err != nil {
			return nil, fmt.Errorf("%q: %v", mc.ID, err)
		}
		m.Input = append([]string(nil), mc.Input...)
	}
	if mc.ContextWindow != nil {
		if *mc.ContextWindow <= 0 {
			return nil, fmt.Errorf("%q: contextWindow must be positive", mc.ID)
		}
		m.ContextWindow = *mc.ContextWindow
	}
	if mc.MaxTokens != nil {
		if *mc.MaxTokens <= 0 {
			return nil, fmt.Errorf("%q: maxTokens must be positive", mc.ID)
		}
		m.MaxTokens = *mc.MaxTokens
	}
	if mc.Cost != nil {
		applyCost(&m.Cost, mc.Cost)
	}
	if len(mc.Compat) > 0 && !isJSONObject(mc.Compat) {
		return nil, fmt.Errorf("%q: compat is not an object", mc.ID)
	}
	if len(mc.Headers) > 0 {
		m.Headers = mergeHeaders(m.Headers, resolveHeaders(mc.Headers, res))
	}
	if m.Reasoning {
		for _, l := range []string{"xhigh", "max"} {
			if v, ok := mc.ThinkingLevelMap[l]; ok && v != nil {
				m.ExtraThinkingLevels = append(m.ExtraThinkingLevels, l)
			}
		}
	}
	return m, nil
}

// anyModelFunc builds models for ids the provider does not list (local
// servers), with models.json's defaults.
func (s *providerSpec) anyModelFunc() func(id string) *ai.Model {
	name, api, baseURL := s.name, s.api, s.baseURL
	compat, headers := s.compat, s.headers
	return func(id string) *ai.Model {
		return &ai.Model{
			ID:            id,
			Name:          id,
			API:           api,
			Provider:      name,
			BaseURL:       baseURL,
			Input:         []string{"text"},
			ContextWindow: DefaultContextWindow,
			MaxTokens:     DefaultMaxTokens,
			Compat:        mergeCompat(compat),
			Headers:       mergeHeaders(nil, headers),
		}
	}
}

func applyOverride(m *ai.Model, o *modelOverride, res *resolver) error {
	if o.Name != nil {
		m.Name = *o.Name
	}
	if o.Reasoning != nil {
		m.Reasoning = *o.Reasoning
		if !m.Reasoning {
			m.ExtraThinkingLevels = nil
		}
	}
	if o.Input != nil {
		if err := validateInput(o.Input); err != nil {
			return err
		}
		m.Input = append([]string(nil), o.Input...)
	}
	if o.ContextWindow != nil {
		if *o.ContextWindow <= 0 {
			return fmt.Errorf("contextWindow must be positive")
		}
		m.ContextWindow = *o.ContextWindow
	}
	if o.MaxTokens != nil {
		if *o.MaxTokens <= 0 {
			return fmt.Errorf("maxTokens must be positive")
		}
		m.MaxTokens = *o.MaxTokens
	}
	if o.Cost != nil {
		applyCost(&m.Cost, o.Cost)
	}
	if len(o.Headers) > 0 {
		m.Headers = mergeHeaders(m.Headers, resolveHeaders(o.Headers, res))
	}
	if len(o.Compat) > 0 {
		if !isJSONObject(o.Compat) {
			return fmt.Errorf("compat is not an object")
		}
		m.Compat = mergeCompat(m.Compat, o.Compat)
	}
	return nil
}

func applyCost(c *ai.ModelCost, cc *costConfig) {
	if cc.Input != nil {
		c.Input = *cc.Input
	}
	if cc.Output != nil {
		c.Output = *cc.Output
	}
	if cc.CacheRead != nil {
		c.CacheRead = *cc.CacheRead
	}
	if cc.CacheWrite != nil {
		c.CacheWrite = *cc.CacheWrite
	}
}

func resolveHeaders(h map[string]string, res *resolver) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = res.value(v)
	}
	return out
}

// mergeHeaders returns a copy of base with add on top (nil when empty).
func mergeHeaders(base, add map[string]string) map[string]string {
	if len(base) == 0 && len(add) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(add))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// entry turns the spec into a registry entry, dropping models whose API has
// no adapter.
func (s *providerSpec) entry(adapters func(string) ai.Provider, reg *Registry, res *resolver, env func(string) string) (*ProviderEntry, []error) {
	var errs []error
	byAPI := map[string]ai.Provider{}
	lookup := func(api string) (ai.Provider, bool) {
		if adapters == nil {
			return nil, true
		}
		if p, ok := byAPI[api]; ok {
			return p, p != nil
		}
		p := adapters(api)
		byAPI[api] = p
		return p, p != nil
	}
	apis := s.modelAPIs()
	keep := make([]bool, len(apis))
	var keptAPIs []string
	dropped := map[string]int{}
	for i, api := range apis {
		if _, ok := lookup(api); ok {
			keep[i] = true
			keptAPIs = append(keptAPIs, api)
		} else {
			dropped[api]++
		}
	}
	droppedAPIs := make([]string, 0, len(dropped))
	for api := range dropped {
		droppedAPIs = append(droppedAPIs, api)
	}
	sort.Strings(droppedAPIs)
	for _, api := range droppedAPIs {
		errs = append(errs, fmt.Errorf("provider %q: no adapter for API %q; skipped %d model(s)", s.name, api, dropped[api]))
	}
	anyModel := s.anyModel
	if anyModel {
		if _, ok := lookup(s.api); !ok {
			if dropped[s.api] == 0 {
				errs = append(errs, fmt.Errorf("provider %q: no adapter for API %q; skipped", s.name, s.api))
			}
			anyModel = false
		}
	}
	if len(keptAPIs) == 0 && !anyModel {
		return nil, errs
	}

	var provider ai.Provider
	if adapters != nil {
		used := map[string]ai.Provider{}
		for _, api := range keptAPIs {
			used[api] = byAPI[api]
		}
		if anyModel {
			used[s.api] = byAPI[s.api]
		}
		if len(used) == 1 {
			for _, p := range used {
				provider = p
			}
		} else {
			provider = apiMux(used)
		}
		if s.authHeader {
			provider = authHeaderProvider{provider}
		}
		if _, ok := auth.Lookup(s.name); ok && (reg.auth != nil || s.name == copilotProvider) {
			provider = &loginProvider{Provider: provider, reg: reg, name: s.name, env: env}
		}
	}

	e := &ProviderEntry{
		Name:     s.name,
		Provider: provider,
		NoKey:    s.noKey,
		KeyFunc:  keyFunc(reg.auth, s.name, s.env, s.apiKey, res, env),
		Env:      s.env,
	}
	if cp := s.catalogue; cp != nil {
		name, store := s.name, reg.auth
		e.build = func() []*ai.Model {
			// A Copilot login lists the models the account may use.
			var allowed map[string]bool
			if name == copilotProvider && store != nil {
				if c, err := store.Get(context.Background(), name); err == nil && c.IsOAuth() && len(c.AvailableModelIDs) > 0 {
					allowed = map[string]bool{}
					for _, id := range c.AvailableModelIDs {
						allowed[id] = true
					}
				}
			}
			var kept []*ai.Model
			for i := range cp.Models {
				if keep[i] && (allowed == nil || allowed[cp.Models[i].ID]) {
					kept = append(kept, cp.Models[i].model(cp))
				}
			}
			return kept
		}
	} else {
		for i, m := range s.models {
			if keep[i] {
				e.Models = append(e.Models, m)
			}
		}
	}
	if anyModel {
		e.AnyModel = s.anyModelFunc()
	}
	return e, errs
}

// keyFunc resolves a provider's key lazily, in pi's order: the auth.json
// entry (an api_key entry's value; an OAuth login's access token, as it is:
// loginProvider refreshes it when a request is sent), models.json's apiKey,
// then the environment variables in order, which count only when nothing is
// stored. An entry auth.json cannot hold (a broken one, reported at load)
// is skipped.
func keyFunc(store *auth.Store, name string, envNames []string, modelsKey string, res *resolver, env func(string) string) func() string {
	return func() string {
		if store != nil {
			if c, err := store.Get(context.Background(), name); err == nil && c != nil {
				if c.IsOAuth() {
					return c.Access
				}
				return res.value(c.Key)
			}
		}
		if k := res.value(modelsKey); k != "" {
			return k
		}
		for _, n := range envNames {
			if v := env(n); v != "" {
				return v
			}
		}
		return ""
	}
}

// apiMux sends each request to the adapter of the model's API.
type apiMux map[string]ai.Provider

func (m apiMux) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	p := m[req.Model.API]
	if p == nil {
		for _, q := range m { // unreachable in practice: models are filtered
			p = q
			break
		}
	}
	return p.Stream(ctx, req, emit)
}

// authHeaderProvider adds "Authorization: Bearer <key>" (models.json
// authHeader: true).
type authHeaderProvider struct{ ai.Provider }

func (a authHeaderProvider) Stream(ctx context.Context, req *ai.Request, emit func(ai.AssistantEvent)) *ai.AssistantMessage {
	if req.APIKey != "" && req.Model != nil {
		r := *req
		m := *req.Model
		m.Headers = mergeHeaders(m.Headers, map[string]string{"Authorization": "Bearer " + req.APIKey})
		r.Model = &m
		req = &r
	}
	return a.Provider.Stream(ctx, req, emit)
}
