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
