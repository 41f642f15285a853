package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Result is one row of the table: a measurement over several runs.
type Result struct {
	Group  string    `json:"group"`
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Runs   []float64 `json:"runs"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	// Target is the row's target as text (docs/performance.md); Limit its upper bound in Unit
	// (0 = no target). OK says whether the median meets it.
	Target string  `json:"target,omitempty"`
	Limit  float64 `json:"limit,omitempty"`
	OK     *bool   `json:"ok,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// finish computes median, min, max and the verdict.
func (r *Result) finish() {
	if len(r.Runs) == 0 {
		return
	}
	s := append([]float64(nil), r.Runs...)
	sort.Float64s(s)
	r.Min, r.Max = s[0], s[len(s)-1]
	if n := len(s); n%2 == 1 {
		r.Median = s[n/2]
	} else {
		r.Median = (s[n/2-1] + s[n/2]) / 2
	}
	if r.Limit > 0 {
		ok := r.Median <= r.Limit
		r.OK = &ok
	}
}

func format(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case unit == "frames" || unit == "count":
		return fmt.Sprintf("%.0f", v)
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// printTable writes the results as a Markdown table.
func printTable(w io.Writer, rs []*Result) {
	fmt.Fprintln(w, "| measurement | unit | median | min | max | target | |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---|")
	for _, r := range rs {
		name := r.Group + ": " + r.Name
		if len(r.Runs) == 0 {
			fmt.Fprintf(w, "| %s | %s | – | – | – | %s | %s |\n", name, r.Unit, r.Target, esc(r.Note))
			continue
		}
		verdict := ""
		if r.OK != nil {
			verdict = "ok"
			if !*r.OK {
				verdict = "MISS"
			}
		}
		if r.Note != "" {
			verdict = strings.TrimSpace(verdict + " " + esc(r.Note))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", name, r.Unit,
			format(r.Median, r.Unit), format(r.Min, r.Unit), format(r.Max, r.Unit), r.Target, verdict)
	}
}

func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ratioUnits are the units where less is better and a ratio means "times
// more" (time, memory, bytes).
var ratioUnits = map[string]bool{"ms": true, "MB": true, "kB": true}

// cell is one agent's figure: median (min–max), or its note; withNote
// adds the note to figures too.
func cell(r *Result, withNote bool) string {
	switch {
	case r == nil:
		return "(not measured)"
	case len(r.Runs) == 0:
		if r.Note != "" {
			return "– (" + esc(strings.TrimPrefix(r.Note, "failed: ")) + ")"
		}
		return "–"
	}
	s := format(r.Median, r.Unit)
	if len(r.Runs) > 1 && r.Min != r.Max {
		s = fmt.Sprintf("%s (%s–%s)", s, format(r.Min, r.Unit), format(r.Max, r.Unit))
	}
	if withNote && r.Note != "" {
		s += "; " + esc(r.Note)
	}
	return s
}

// ratio is other's median over base's, for units where less is better.
func ratio(base, other *Result) string {
	if base == nil || other == nil || len(base.Runs) == 0 || len(other.Runs) == 0 || !ratioUnits[base.Unit] || base.Median <= 0 {
		return ""
	}
	q := other.Median / base.Median
	if q >= 10 {
		return fmt.Sprintf("%.0f×", q)
	}
	return fmt.Sprintf("%.1f×", q)
}

// printCompare writes one table of every agent's rows side by side, with
// each other agent's median over the first agent's (its ratio: above 1,
// the first agent takes less), and the first agent's targets.
func printCompare(w io.Writer, agents []*agent) {
	key := func(r *Result) string { return r.Group + "\x00" + r.Name }
	var order []*Result // the first row of each key
	rows := make([]map[string]*Result, len(agents))
	seen := map[string]bool{}
	for i, ag := range agents {
		rows[i] = map[string]*Result{}
		for _, r := range ag.results {
			rows[i][key(r)] = r
			if !seen[key(r)] {
				seen[key(r)] = true
				order = append(order, r)
			}
		}
	}
	base := agents[0]
	head := "| measurement | unit | " + base.name
	sep := "|---|---|---"
	for _, ag := range agents[1:] {
		head += " | " + ag.name + " | " + ag.name + " ÷ " + base.name
		sep += "|---|---:"
	}
	fmt.Fprintln(w, head+" | target | |")
	fmt.Fprintln(w, sep+"|---|---|")
	for _, o := range order {
		k := key(o)
		b := rows[0][k]
		line := fmt.Sprintf("| %s: %s | %s | %s", o.Group, o.Name, o.Unit, cell(b, false))
		for i := range agents[1:] {
			r := rows[i+1][k]
			c := cell(r, true)
			if r == nil && b != nil {
				c = "(" + base.name + " only)"
			}
			line += " | " + c + " | " + ratio(b, r)
		}
		verdict, tgt := "", ""
		if b != nil {
			tgt = b.Target
			if b.OK != nil {
				verdict = map[bool]string{true: "ok", false: "MISS"}[*b.OK]
			}
			if b.Note != "" && len(b.Runs) > 0 {
				verdict = strings.TrimSpace(verdict + " " + esc(b.Note))
			}
		}
		fmt.Fprintf(w, "%s | %s | %s |\n", line, tgt, verdict)
	}
}
