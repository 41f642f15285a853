package cli

import (
	"fmt"
	"io"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/lazy"
	"github.com/pisces-agent/pisces/internal/models"
)

// listModels is --list-models [SEARCH]: as pi 1.5.2, the models whose
// provider has a key (local servers from models.json included), filtered by
// a fuzzy search over "provider id", sorted by provider then id, in
// columns. all lists the whole catalogue instead (--list-models --all).
func listModels(r *models.Registry, search string, all bool, w io.Writer) int {
	ms := r.Available()
	if all {
		ms = r.All()
	}
	if len(ms) == 0 {
		fmt.Fprintln(w, noModelsAvailable(r))
		return 0
	}
	if search != "" {
		ms = fuzzyFilter(ms, search)
		if len(ms) == 0 {
			fmt.Fprintf(w, "No models matching %q\n", search)
			return 0
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if c := localeCompare(ms[i].Provider, ms[j].Provider); c != 0 {
			return c < 0
		}
		return localeCompare(ms[i].ID, ms[j].ID) < 0
	})
	rows := [][]string{{"provider", "model", "context", "max-out", "thinking", "images"}}
	for _, m := range ms {
		rows = append(rows, []string{m.Provider, m.ID, formatTokenCount(m.ContextWindow), formatTokenCount(m.MaxTokens), yesNo(m.Reasoning), yesNo(hasImageInput(m))})
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, cell := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(cell))))
		}
		b.WriteByte('\n')
	}
	io.WriteString(w, b.String())
	return 0
}

// noModelsAvailable says why nothing can be listed and what to do.
func noModelsAvailable(r *models.Registry) string {
	var vars []string
	for _, p := range r.Providers() {
		if v := r.KeyVariable(p); v != "" {
			vars = append(vars, v)
		}
	}
	return "No models available: no provider has an API key.\n" +
		"Set one of " + strings.Join(vars, ", ") + "\n" +
		"or add a key to " + r.AuthFile() + ` ({"openai": {"type": "api_key", "key": "sk-..."}}),` + "\n" +
		"or log in to a subscription: pisces auth login (Claude Pro/Max, ChatGPT Plus/Pro, GitHub Copilot).\n" +
		"A local server needs no key: --provider ollama --model NAME (also lmstudio, vllm, llama.cpp).\n" +
		"pisces --list-models --all lists every model Pisces knows."
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func hasImageInput(m *ai.Model) bool {
	for _, in := range m.Input {
		if in == "image" {
			return true
		}
	}
	return false
}

// formatTokenCount writes a count as pi does: 200000 → "200K", 1000000 →
// "1M", 8192 → "8.2K" (one decimal, rounded as JavaScript's toFixed).
func formatTokenCount(n int) string {
	switch {
	case n >= 1_000_000:
		return scaled(n, 1_000_000) + "M"
	case n >= 1_000:
		return scaled(n, 1_000) + "K"
	}
	return strconv.Itoa(n)
}

func scaled(n, unit int) string {
	if n%unit == 0 {
		return strconv.Itoa(n / unit)
	}
	// toFixed(1) of the double n/unit: the nearest tenth of its exact
	// value, ties away from zero.
	x := new(big.Rat).SetFloat64(float64(n) / float64(unit))
	x.Mul(x, big.NewRat(10, 1))
	x.Add(x, big.NewRat(1, 2))
	tenths := new(big.Int).Quo(x.Num(), x.Denom()).Int64()
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

// fuzzyFilter keeps the models whose "provider id" matches every
// whitespace- or slash-separated token of the query (pi's fuzzy filter: a
// token matches when its characters appear in order; "gpt5" also tries
// "5gpt" and the reverse).
func fuzzyFilter(ms []*ai.Model, query string) []*ai.Model {
	tokens := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return r == '/' || r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	})
	if len(tokens) == 0 {
		return ms
	}
	var out []*ai.Model
	for _, m := range ms {
		text := strings.ToLower(m.Provider + " " + m.ID)
		ok := true
		for _, tok := range tokens {
			if !fuzzyMatch(tok, text) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

var (
	lettersDigits = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^([a-z]+)([0-9]+)$`) }}
	digitsLetters = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+)([a-z]+)$`) }}
)

func fuzzyMatch(query, text string) bool {
	if isSubsequence(query, text) {
		return true
	}
	if m := lettersDigits.Get().FindStringSubmatch(query); m != nil {
		return isSubsequence(m[2]+m[1], text)
	}
	if m := digitsLetters.Get().FindStringSubmatch(query); m != nil {
		return isSubsequence(m[2]+m[1], text)
	}
	return false
}

func isSubsequence(q, text string) bool {
	qr := []rune(q)
	i := 0
	for _, r := range text {
		if i < len(qr) && r == qr[i] {
			i++
		}
	}
	return i == len(qr)
}

// localeCompare orders strings roughly as JavaScript's localeCompare (the
// root collation) does for the ASCII of provider names and model ids:
// punctuation before digits before letters, letters compared without case
// first, lower case before upper case on a tie.
func localeCompare(a, b string) int {
	if c := compareRanks(a, b, false); c != 0 {
		return c
	}
	return compareRanks(a, b, true)
}

func compareRanks(a, b string, tertiary bool) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ra, rb := collationRank(a[i], tertiary), collationRank(b[i], tertiary)
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// punctuationOrder is the root collation's order of ASCII punctuation and
// symbols.
const punctuationOrder = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"

func collationRank(c byte, tertiary bool) int {
	if i := strings.IndexByte(punctuationOrder, c); i >= 0 {
		return 1 + i
	}
	switch {
	case c >= '0' && c <= '9':
		return 100 + int(c-'0')
	case c >= 'a' && c <= 'z':
		return 200 + 2*int(c-'a')
	case c >= 'A' && c <= 'Z':
		r := 200 + 2*int(c-'A')
		if tertiary {
			r++
		}
		return r
	case c == ' ':
		return 0
	}
	return 300 + int(c)
}
