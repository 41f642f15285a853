package settings

import (
	"encoding/json"
	"math"
	"strconv"
)

// String returns the string at path, or def when it is absent or not a string.
func (s *Settings) String(path, def string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v, ok := lookup(s.merged, path); ok {
		if str, ok := v.(string); ok {
			return str
		}
	}
	return def
}

// Bool returns the boolean at path, or def when it is absent or not a boolean.
func (s *Settings) Bool(path string, def bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v, ok := lookup(s.merged, path); ok {
		if b, ok := v.(bool); ok {
			return b
		}
	}
	return def
}

// Int returns the number at path as an int, or def when it is absent, not a
// number, or not a whole number.
func (s *Settings) Int(path string, def int) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if v, ok := lookup(s.merged, path); ok {
		if n, ok := toInt(v); ok {
			return n
		}
	}
	return def
}

// Strings returns the array of strings at path; nil when it is absent or is
// not an array. Elements that are not strings are skipped.
func (s *Settings) Strings(path string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := lookup(s.merged, path)
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if str, ok := e.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

func (s *Settings) hasInt(path string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := lookup(s.merged, path)
	if !ok {
		return false
	}
	_, ok = toInt(v)
	return ok
}

func toInt(v any) (int, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 0); err == nil {
			return int(i), true
		}
		x, err := n.Float64()
		if err != nil {
			return 0, false
		}
		f = x
	case float64:
		f = n
	case int:
		return n, true
	case int64:
		return int(n), true
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || f > math.MaxInt || f < math.MinInt {
		return 0, false
	}
	return int(f), true
}

// DefaultProvider is the defaultProvider setting ("" when unset).
func (s *Settings) DefaultProvider() string { return s.String("defaultProvider", "") }

// DefaultModel is the defaultModel setting ("" when unset).
func (s *Settings) DefaultModel() string { return s.String("defaultModel", "") }

// DefaultThinkingLevel is defaultThinkingLevel, "medium" when unset.
func (s *Settings) DefaultThinkingLevel() string {
	return s.String("defaultThinkingLevel", DefaultThinkingLevelValue)
}

// SteeringMode is steeringMode: "all" or "one-at-a-time" (the default).
func (s *Settings) SteeringMode() string { return queueMode(s.String("steeringMode", "")) }

// FollowUpMode is followUpMode: "all" or "one-at-a-time" (the default).
func (s *Settings) FollowUpMode() string { return queueMode(s.String("followUpMode", "")) }

func queueMode(v string) string {
	if v == "all" || v == "one-at-a-time" {
		return v
	}
	return DefaultQueueMode
}

// InterruptMode is interruptMode: "immediate" (the default) or "wait".
func (s *Settings) InterruptMode() string {
	if v := s.String("interruptMode", ""); v == "wait" || v == "immediate" {
		return v
	}
	return DefaultInterruptMode
}

// CompactionEnabled is compaction.enabled, true when unset.
func (s *Settings) CompactionEnabled() bool {
	return s.Bool("compaction.enabled", DefaultCompactionEnabledValue)
}

// ReserveTokens is compaction.reserveTokens, 16384 when unset.
func (s *Settings) ReserveTokens() int {
	return s.Int("compaction.reserveTokens", DefaultReserveTokens)
}

// KeepRecentTokens is compaction.keepRecentTokens, 20000 when unset.
func (s *Settings) KeepRecentTokens() int {
	return s.Int("compaction.keepRecentTokens", DefaultKeepRecentTokens)
}

// BranchSummaryReserveTokens is branchSummary.reserveTokens, 16384 when unset.
func (s *Settings) BranchSummaryReserveTokens() int {
	return s.Int("branchSummary.reserveTokens", DefaultBranchSummaryReserve)
}

// RetryEnabled is retry.enabled, true when unset.
func (s *Settings) RetryEnabled() bool { return s.Bool("retry.enabled", DefaultRetryEnabledValue) }

// RetryMaxRetries is retry.maxRetries, 3 when unset.
func (s *Settings) RetryMaxRetries() int { return s.Int("retry.maxRetries", DefaultRetryMaxRetries) }

// RetryBaseDelayMs is retry.baseDelayMs, 2000 when unset.
func (s *Settings) RetryBaseDelayMs() int { return s.Int("retry.baseDelayMs", DefaultRetryBaseDelayMs) }

// RetryMaxDelayMs is the longest retry delay: retry.provider.maxRetryDelayMs
// (where newer pi versions keep it) when set, else retry.maxDelayMs (the
// older key), else 60000.
func (s *Settings) RetryMaxDelayMs() int {
	if s.hasInt("retry.provider.maxRetryDelayMs") {
		return s.Int("retry.provider.maxRetryDelayMs", DefaultRetryMaxDelayMs)
	}
	return s.Int("retry.maxDelayMs", DefaultRetryMaxDelayMs)
}

// ShellPath is shellPath ("" when unset: the bash tool picks a shell).
func (s *Settings) ShellPath() string { return s.String("shellPath", "") }

// ShellCommandPrefix is shellCommandPrefix ("" when unset).
func (s *Settings) ShellCommandPrefix() string { return s.String("shellCommandPrefix", "") }

// EnabledModels is enabledModels, the model patterns for cycling (nil when unset).
func (s *Settings) EnabledModels() []string { return s.Strings("enabledModels") }

// DefaultTools is defaultTools, the tools active by default (nil when unset).
func (s *Settings) DefaultTools() []string { return s.Strings("defaultTools") }

// Extensions is extensions, extra extension paths (nil when unset).
func (s *Settings) Extensions() []string { return s.Strings("extensions") }

// SessionDir is sessionDir ("" when unset). It is returned as written;
// callers resolve "~" and relative paths.
func (s *Settings) SessionDir() string { return s.String("sessionDir", "") }
