package models

import (
	"sort"
	"strconv"
	"strings"
)

// NotFoundError is a model pattern that names no model. Closest holds the
// nearest names ("provider/id"), best first, when some are near enough.
type NotFoundError struct {
	Pattern string
	Closest []string
}

func (e *NotFoundError) Error() string {
	msg := "unknown model " + strconv.Quote(e.Pattern)
	if len(e.Closest) > 0 {
		msg += "; closest: " + strings.Join(e.Closest, ", ")
	}
	return msg
}

// Closest returns up to n listed models ("provider/id") whose names are
// nearest to pattern, for a "did you mean" message: the edit distance
// (insertions, deletions, substitutions and swaps of neighbours, case
// ignored) between the pattern and the best-matching part of the id, or
// of "provider/id" when the pattern has a slash. Only models within about
// one edit per four characters are offered; among equals, models with a
// key come first, then the shorter overall distance, then the name.
// provider, when set, restricts the search.
func (r *Registry) Closest(provider, pattern string, n int) []string {
	pat := strings.ToLower(strings.TrimSpace(pattern))
	if pat == "" || n <= 0 {
		return nil
	}
	limit := max(1, len([]rune(pat))/4)
	type cand struct {
		name        string
		part, whole int
		keyed       bool
	}
	var cands []cand
	keyed := map[string]bool{}
	for _, m := range r.All() {
		if provider != "" && !strings.EqualFold(m.Provider, provider) {
			continue
		}
		full := m.Provider + "/" + m.ID
		text := strings.ToLower(m.ID)
		if strings.Contains(pat, "/") {
			text = strings.ToLower(full)
		}
		part := substringDistance(pat, text)
		if part > limit {
			continue
		}
		k, seen := keyed[m.Provider]
		if !seen {
			_, k = r.Key(m.Provider)
			keyed[m.Provider] = k
		}
		cands = append(cands, cand{full, part, editDistance(pat, text), k})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		switch {
		case a.part != b.part:
			return a.part < b.part
		case a.keyed != b.keyed:
			return a.keyed
		case a.whole != b.whole:
			return a.whole < b.whole
		}
		return a.name < b.name
	})
	var out []string
	for _, c := range cands {
		if len(out) == n {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// notFound builds the error of an unresolved pattern.
func (r *Registry) notFound(provider, pattern, shown string) error {
	return &NotFoundError{Pattern: shown, Closest: r.Closest(provider, pattern, 3)}
}

// editDistance is the optimal-string-alignment distance of a and b.
func editDistance(a, b string) int {
	return alignment(a, b, false)
}

// substringDistance is the smallest edit distance between a and any
// substring of b.
func substringDistance(a, b string) int {
	return alignment(a, b, true)
}

// alignment computes the optimal-string-alignment distance between a and
// b; with free set, b's characters before and after the aligned part cost
// nothing.
func alignment(a, b string, free bool) int {
	ra, rb := []rune(a), []rune(b)
	rows := make([][]int, len(ra)+1)
	for i := range rows {
		rows[i] = make([]int, len(rb)+1)
		rows[i][0] = i
	}
	for j := 1; j <= len(rb); j++ {
		if !free {
			rows[0][j] = j
		}
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	if !free {
		return rows[len(ra)][len(rb)]
	}
	best := rows[len(ra)][0]
	for j := 1; j <= len(rb); j++ {
		best = min(best, rows[len(ra)][j])
	}
	return best
}
