package cli

import (
	"regexp"
	"strings"
)

// toolChoice is what the flags and settings say about the active tools.
type toolChoice struct {
	defaults  []string // settings defaultTools (plain names, or +name/-name entries)
	list      []string // --tools; nil when not given
	exclude   []string // --exclude-tools: names or patterns
	noTools   bool     // --no-tools: no built-in and no extension tool by default
	noBuiltin bool     // --no-builtin-tools: no built-in tool by default
}

// isToolModifier reports a +name / -name entry.
func isToolModifier(s string) bool { return strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") }

// toolListError checks a --tools or defaultTools list as pi 1.5 does: either
// names and patterns, or only +name/-name entries with exact names.
func toolListError(list []string) string {
	mods := 0
	for _, x := range list {
		if isToolModifier(x) {
			mods++
			if strings.Contains(x, "*") {
				return "+name and -name entries take exact tool names, not patterns: " + x
			}
		}
	}
	if mods > 0 && mods < len(list) {
		return "tool names cannot be mixed with +name or -name entries"
	}
	return ""
}

// toolPattern matches tool names against a list of exact names and
// patterns in which "*" stands for any characters (pi 1.5's tool patterns).
type toolPattern struct {
	names    map[string]bool
	patterns []*regexp.Regexp
}

func newToolPattern(entries []string) *toolPattern {
	p := &toolPattern{names: map[string]bool{}}
	for _, e := range entries {
		if strings.Contains(e, "*") {
			p.patterns = append(p.patterns, toolPatternRegexp(e))
		} else {
			p.names[e] = true
		}
	}
	return p
}

func toolPatternRegexp(pattern string) *regexp.Regexp {
	parts := strings.Split(pattern, "*")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

func (p *toolPattern) match(name string) bool {
	if p.names[name] {
		return true
	}
	for _, re := range p.patterns {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// selectTools decides the active tools from Pisces' own tools (builtin, in
// order; the default set is defaultActive) and the extensions' tools:
//
//   - the base is the defaultTools setting applied to defaultActive, or
//     nothing with --no-tools or --no-builtin-tools;
//   - a --tools list of only +name/-name entries changes that base; any
//     other --tools list is an allowlist: exactly the tools (built-in or
//     extension) it names or matches are active;
//   - without an allowlist every extension tool is active too, except with
//     --no-tools;
//   - --exclude-tools removes what it names or matches, from all of them.
//
// Every entry must name or match at least one tool: a typo is an error
// naming the entry, not a silently missing tool.
func selectTools(c toolChoice, builtin, extension, defaultActive []string) ([]string, error) {
	all := append(append([]string(nil), builtin...), extension...)
	check := func(what string, entries []string) error {
		for _, e := range entries {
			name := e
			if what != "--exclude-tools" && isToolModifier(e) {
				name = e[1:]
			}
			if isMCPToolName(name) {
				continue // MCP tools appear once their servers connect
			}
			p := newToolPattern([]string{name})
			ok := false
			for _, n := range all {
				if p.match(n) {
					ok = true
					break
				}
			}
			if !ok {
				kind := "Unknown tool"
				if strings.Contains(name, "*") {
					kind = "No tool matches"
				}
				return usagef("%s %q in %s (available: %s)", kind, name, what, strings.Join(all, ", "))
			}
		}
		return nil
	}
	if msg := toolListError(c.defaults); msg != "" {
		return nil, usagef("settings defaultTools: %s", msg)
	}
	if msg := toolListError(c.list); msg != "" {
		return nil, usagef("--tools: %s", msg)
	}
	if err := check("settings defaultTools", c.defaults); err != nil {
		return nil, err
	}
	if err := check("--tools", c.list); err != nil {
		return nil, err
	}
	if err := check("--exclude-tools", c.exclude); err != nil {
		return nil, err
	}

	var active []string
	allowlist := c.list != nil && (len(c.list) == 0 || !isToolModifier(c.list[0]))
	if allowlist {
		active = applyToolList(nil, c.list, all)
	} else {
		if !c.noTools && !c.noBuiltin {
			active = applyToolList(defaultActive, c.defaults, all)
		}
		active = applyToolList(active, c.list, all)
		if !c.noTools {
			for _, n := range extension {
				if !contains(active, n) {
					active = append(active, n)
				}
			}
		}
	}
	if len(c.exclude) > 0 {
		p := newToolPattern(c.exclude)
		kept := active[:0:0]
		for _, n := range active {
			if !p.match(n) {
				kept = append(kept, n)
			}
		}
		active = kept
	}
	if active == nil {
		active = []string{}
	}
	return active, nil
}

// applyToolList applies a list of names and patterns (the tools of all it
// names or matches replace the set) or of +name/-name entries (adding to
// and removing from it, in order). An empty list changes nothing.
func applyToolList(cur, list, all []string) []string {
	if len(list) == 0 {
		return append([]string(nil), cur...)
	}
	if !isToolModifier(list[0]) {
		p := newToolPattern(list)
		out := []string{}
		for _, n := range all {
			if p.match(n) {
				out = append(out, n)
			}
		}
		return out
	}
	out := append([]string{}, cur...)
	for _, x := range list {
		name := x[1:]
		out = remove(out, name)
		if x[0] == '+' {
			out = append(out, name)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func remove(list []string, name string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != name {
			out = append(out, x)
		}
	}
	return out
}
