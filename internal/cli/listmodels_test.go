package cli

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

// The expected values are what pi's formatter, its fuzzy filter and Node's
// localeCompare give for the same inputs.
func TestFormatTokenCountAsPi(t *testing.T) {
	for n, want := range map[int]string{
		8192: "8.2K", 131072: "131.1K", 1048576: "1.0M", 1150: "1.1K", 8250: "8.3K", 1050: "1.1K",
		2050: "2.0K", 1250000: "1.3M", 1150000: "1.1M", 999: "999", 65536: "65.5K", 272000: "272K",
		200000: "200K", 1000000: "1M", 0: "0",
	} {
		if got := formatTokenCount(n); got != want {
			t.Errorf("formatTokenCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLocaleCompareOrder(t *testing.T) {
	in := []string{"gpt-4o", "a/b", "Ab", "a1", "gpt-4", "a:b", "aB", "a.b", "ab", "a-b", "a_b", "gpt-4.1", "a b", "gpt-4-turbo"}
	sort.Slice(in, func(i, j int) bool { return localeCompare(in[i], in[j]) < 0 })
	want := "a b | a_b | a-b | a:b | a.b | a/b | a1 | ab | aB | Ab | gpt-4 | gpt-4-turbo | gpt-4.1 | gpt-4o"
	if got := strings.Join(in, " | "); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
}

func TestFuzzyFilterAsPi(t *testing.T) {
	ms := []*ai.Model{
		{Provider: "openai", ID: "gpt-5"},
		{Provider: "openai", ID: "gpt-4o-mini"},
		{Provider: "anthropic", ID: "claude-sonnet-4-5"},
		{Provider: "groq", ID: "openai/gpt-oss-20b"},
	}
	ids := func(q string) []string {
		var out []string
		for _, m := range fuzzyFilter(ms, q) {
			out = append(out, m.ID)
		}
		return out
	}
	for q, want := range map[string][]string{
		"gpt5":          {"gpt-5"},                                      // letters then digits, in order
		"5gpt":          {"gpt-5"},                                      // swapped: digits then letters
		"sonnet":        {"claude-sonnet-4-5"},                          // a plain run
		"openai/gpt":    {"gpt-5", "gpt-4o-mini", "openai/gpt-oss-20b"}, // tokens split at '/'
		"groq oss":      {"openai/gpt-oss-20b"},                         // every token must match
		"OPUS":          {"claude-sonnet-4-5"},                          // case-insensitive; anthrOPic claUde Sonnet
		"xyz":           nil,
		"   ":           {"gpt-5", "gpt-4o-mini", "claude-sonnet-4-5", "openai/gpt-oss-20b"},
		"anthropic 4-5": {"claude-sonnet-4-5"},
	} {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("fuzzyFilter(%q) = %q, want %q", q, got, want)
		}
	}
}
