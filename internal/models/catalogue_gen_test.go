package models

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/pisces-agent/pisces/internal/testenv"
)

var updateCatalogue = flag.Bool("update", false, "rewrite catalogue_gen.go from catalogue.json")

// TestCatalogueGenerated checks that catalogue_gen.go holds exactly what
// parseCatalogue (which validates) makes of catalogue.json. After editing
// catalogue.json run
//
//	go test ./internal/models -run TestCatalogueGenerated -update
//
// (refused when CI is set), then the tests again: the run that rewrites the
// file still holds the old catalogue compiled in, and fails if it differs.
func TestCatalogueGenerated(t *testing.T) {
	data, err := os.ReadFile("catalogue.json")
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := parseCatalogue(data)
	if err != nil {
		t.Fatal(err)
	}
	src, err := catalogueSource(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if testenv.Update(t, *updateCatalogue) {
		if err := os.WriteFile("catalogue_gen.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := os.ReadFile("catalogue_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cur, src) {
		t.Errorf("catalogue_gen.go is out of date: run go test ./internal/models -run TestCatalogueGenerated -update")
	}
	if !reflect.DeepEqual(catalogueData, parsed) {
		t.Errorf("catalogueData differs from catalogue.json (after -update, run the tests again to compile the new catalogue_gen.go)")
	}
	got, err := Catalogue()
	if err != nil || !reflect.DeepEqual(got, parsed) {
		t.Errorf("Catalogue() = %v, %v", got, err)
	}
}

// catalogueSource writes the providers as a Go composite literal, which
// the compiler lays out as static data (no parsing or allocation at run
// time). Nil and empty slices are kept apart, as parseCatalogue makes them.
func catalogueSource(ps []CatalogueProvider) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated from catalogue.json by TestCatalogueGenerated\n")
	b.WriteString("// (go test ./internal/models -run TestCatalogueGenerated -update). DO NOT EDIT.\n\n")
	b.WriteString("package models\n\nimport (\n")
	if hasCompat(ps) {
		b.WriteString("\t\"encoding/json\"\n\n")
	}
	b.WriteString("\t\"github.com/pisces-agent/pisces/internal/ai\"\n)\n\n")
	b.WriteString("var catalogueData = []CatalogueProvider{\n")
	for _, p := range ps {
		b.WriteString("{\n")
		fmt.Fprintf(&b, "Name: %s,\nAPI: %s,\nBaseURL: %s,\n", strconv.Quote(p.Name), strconv.Quote(p.API), strconv.Quote(p.BaseURL))
		if p.Env != nil {
			fmt.Fprintf(&b, "Env: %s,\n", strs(p.Env))
		}
		if p.Local {
			b.WriteString("Local: true,\n")
		}
		if p.Login {
			b.WriteString("Login: true,\n")
		}
		if p.Compat != nil {
			fmt.Fprintf(&b, "Compat: json.RawMessage(%s),\n", quote(string(p.Compat)))
		}
		if p.Models != nil {
			b.WriteString("Models: []CatalogueModel{\n")
			for _, m := range p.Models {
				b.WriteString("{")
				fmt.Fprintf(&b, "ID: %s, Name: %s", strconv.Quote(m.ID), strconv.Quote(m.Name))
				if m.API != "" {
					fmt.Fprintf(&b, ", API: %s", strconv.Quote(m.API))
				}
				if m.Reasoning {
					b.WriteString(", Reasoning: true")
				}
				if m.Input != nil {
					fmt.Fprintf(&b, ", Input: %s", strs(m.Input))
				}
				fmt.Fprintf(&b, ", ContextWindow: %d, MaxTokens: %d", m.ContextWindow, m.MaxTokens)
				fmt.Fprintf(&b, ", Cost: ai.ModelCost{Input: %s, Output: %s, CacheRead: %s, CacheWrite: %s}",
					num(m.Cost.Input), num(m.Cost.Output), num(m.Cost.CacheRead), num(m.Cost.CacheWrite))
				if m.ExtraThinkingLevels != nil {
					fmt.Fprintf(&b, ", ExtraThinkingLevels: %s", strs(m.ExtraThinkingLevels))
				}
				if m.Compat != nil {
					fmt.Fprintf(&b, ", Compat: json.RawMessage(%s)", quote(string(m.Compat)))
				}
				b.WriteString("},\n")
			}
			b.WriteString("},\n")
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func hasCompat(ps []CatalogueProvider) bool {
	for _, p := range ps {
		if p.Compat != nil {
			return true
		}
		for _, m := range p.Models {
			if m.Compat != nil {
				return true
			}
		}
	}
	return false
}

// quote writes s as a raw string literal when it can be one.
func quote(s string) string {
	if strconv.CanBackquote(s) {
		return "`" + s + "`"
	}
	return strconv.Quote(s)
}

func strs(ss []string) string {
	var b bytes.Buffer
	b.WriteString("[]string{")
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	b.WriteString("}")
	return b.String()
}

// num writes a float64 so that the constant converts back to the same
// value ('g' with the shortest representation round-trips).
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
