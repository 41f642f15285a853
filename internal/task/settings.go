package task

import (
	"encoding/json"
	"math"
)

// Setting defaults.
const (
	DefaultMaxConcurrency          = 32
	DefaultVerificationMaxRetries  = 1
	DefaultFailureContextLineLimit = 200
	DefaultWarnAtRatio             = 0.8
)

// Settings are the task.* settings this package reads.
type Settings struct {
	// MaxConcurrency is task.maxConcurrency: how many items of one call run
	// at the same time (default 32).
	MaxConcurrency int
	Verification   VerificationSettings
	// Budget is task.budget.* (scope "session"), TaskBudget
	// task.budget.task.* (one task call) and SubagentBudget
	// task.budget.subagent.* (each subagent).
	Budget         Limits
	TaskBudget     Limits
	SubagentBudget Limits
}

// VerificationSettings are task.verification.*.
type VerificationSettings struct {
	Enabled                 bool   // enabled (false)
	DefaultProfile          string // defaultProfile ("")
	RequireForIsolated      bool   // requireForIsolated (false)
	MaxRetries              int    // maxRetries (1)
	FailureContextLineLimit int    // failureContextLineLimit (200)
	// Profiles holds task.verification.profiles as written; a profile is
	// decoded (and rejected when invalid) only when it is used.
	Profiles map[string]json.RawMessage
}

// DefaultSettings returns the defaults of every task.* setting.
func DefaultSettings() Settings {
	return Settings{
		MaxConcurrency: DefaultMaxConcurrency,
		Verification: VerificationSettings{
			MaxRetries:              DefaultVerificationMaxRetries,
			FailureContextLineLimit: DefaultFailureContextLineLimit,
		},
		Budget:         Limits{WarnAtRatio: DefaultWarnAtRatio},
		TaskBudget:     Limits{WarnAtRatio: DefaultWarnAtRatio},
		SubagentBudget: Limits{WarnAtRatio: DefaultWarnAtRatio},
	}
}

// SettingsSource is where settings come from; *settings.Settings satisfies
// it (Get takes a dotted path and returns the merged value).
type SettingsSource interface {
	Get(path string) (any, bool)
}

// LoadSettings reads the task.* settings from src. Values of the wrong type
// are ignored (the default applies), as the other settings accessors do.
func LoadSettings(src SettingsSource) Settings {
	s := DefaultSettings()
	if src == nil {
		return s
	}
	if n, ok := number(src, "task.maxConcurrency"); ok && n >= 1 && n == math.Trunc(n) {
		s.MaxConcurrency = int(n)
	}
	v := &s.Verification
	if b, ok := boolean(src, "task.verification.enabled"); ok {
		v.Enabled = b
	}
	if b, ok := boolean(src, "task.verification.requireForIsolated"); ok {
		v.RequireForIsolated = b
	}
	if str, ok := src.Get("task.verification.defaultProfile"); ok {
		if str, ok := str.(string); ok {
			v.DefaultProfile = str
		}
	}
	if n, ok := number(src, "task.verification.maxRetries"); ok && n >= 0 && n == math.Trunc(n) {
		v.MaxRetries = int(n)
	}
	if n, ok := number(src, "task.verification.failureContextLineLimit"); ok && n >= 1 && n == math.Trunc(n) {
		v.FailureContextLineLimit = int(n)
	}
	if raw, ok := src.Get("task.verification.profiles"); ok {
		if m, ok := raw.(map[string]any); ok {
			v.Profiles = make(map[string]json.RawMessage, len(m))
			for name, p := range m {
				if b, err := json.Marshal(p); err == nil {
					v.Profiles[name] = b
				}
			}
		}
	}
	s.Budget = loadLimits(src, "task.budget.", DefaultWarnAtRatio)
	s.TaskBudget = loadLimits(src, "task.budget.task.", s.Budget.WarnAtRatio)
	s.SubagentBudget = loadLimits(src, "task.budget.subagent.", s.Budget.WarnAtRatio)
	return s
}

func loadLimits(src SettingsSource, prefix string, ratio float64) Limits {
	l := Limits{WarnAtRatio: ratio}
	get := func(key string) float64 {
		if n, ok := number(src, prefix+key); ok && n > 0 {
			return n
		}
		return 0
	}
	l.WallTimeMs = int64(get("maxWallTimeMs"))
	l.InputTokens = int64(get("maxInputTokens"))
	l.OutputTokens = int64(get("maxOutputTokens"))
	l.TotalTokens = int64(get("maxTotalTokens"))
	l.CostUsd = get("maxCostUsd")
	l.ToolCalls = int64(get("maxToolCalls"))
	l.Subagents = int64(get("maxSubagents"))
	if r, ok := number(src, prefix+"warnAtRatio"); ok && r > 0 && r <= 1 {
		l.WarnAtRatio = r
	}
	return l
}

func number(src SettingsSource, path string) (float64, bool) {
	v, ok := src.Get(path)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func boolean(src SettingsSource, path string) (bool, bool) {
	v, ok := src.Get(path)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	return b, ok
}
