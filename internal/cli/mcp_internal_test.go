package cli

import "testing"

// --tools and --exclude-tools apply to MCP tools as in pi 1.5.
func TestMCPAllow(t *testing.T) {
	for _, c := range []struct {
		args    []string
		allowed map[string]bool
	}{
		{nil, map[string]bool{"mcp__a__x": true, "tool_search": true}},
		{[]string{"--tools", "read,bash"}, map[string]bool{"mcp__a__x": true, "mcp__b__y": true}},
		{[]string{"--tools", "read,mcp__a__*"}, map[string]bool{"mcp__a__x": true, "mcp__b__y": false, "tool_search": true}},
		{[]string{"--tools", "+grep"}, map[string]bool{"mcp__b__y": true}},
		{[]string{"--exclude-tools", "mcp__b__*,tool_search"}, map[string]bool{"mcp__a__x": true, "mcp__b__y": false, "tool_search": false}},
	} {
		a, err := ParseArgs(c.args)
		if err != nil {
			t.Fatal(err)
		}
		allow := mcpAllow(a)
		for name, want := range c.allowed {
			if got := allow(name); got != want {
				t.Errorf("%v: %s allowed = %v, want %v", c.args, name, got, want)
			}
		}
	}
	for _, c := range []struct {
		list []string
		want bool
	}{{[]string{"+codemode"}, true}, {[]string{"read", "codemode"}, true}, {[]string{"read"}, false}, {nil, false}} {
		if got := wantsCodemode(c.list); got != c.want {
			t.Errorf("wantsCodemode(%v) = %v", c.list, got)
		}
	}
}
