package models

import (
	"errors"
	"slices"
	"testing"
)

func TestEditDistances(t *testing.T) {
	for _, c := range []struct {
		a, b        string
		whole, part int
	}{
		{"gtp-5", "gpt-5", 1, 1},              // neighbours swapped
		{"gpt5", "gpt-5", 1, 1},               // one left out
		{"sonet", "claude-sonnet-4-5", 12, 1}, // a typo inside a longer id
		{"", "abc", 3, 0},
		{"abc", "abc", 0, 0},
		{"kitten", "sitting", 3, 2}, // "sittin" is two edits away
	} {
		if got := editDistance(c.a, c.b); got != c.whole {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.whole)
		}
		if got := substringDistance(c.a, c.b); got != c.part {
			t.Errorf("substringDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.part)
		}
	}
}

func TestUnknownModelSuggestsClosest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "models.json", `{"providers": {
  "acme": {"baseUrl": "https://acme.example/v1", "api": "openai-completions", "apiKey": "k",
    "models": [{"id": "wombat-large-2"}, {"id": "wombat-small-2"}, {"id": "quokka-1"}]},
  "zoo": {"baseUrl": "https://zoo.example/v1", "api": "openai-completions",
    "models": [{"id": "wombat-large-3"}]}}}`)
	reg := load(t, dir, nil)

	_, err := reg.Resolve("", "wombta-large")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v is not a NotFoundError", err)
	}
	// Equally near: the provider with a key first.
	if want := []string{"acme/wombat-large-2", "zoo/wombat-large-3"}; !slices.Equal(nf.Closest, want) {
		t.Errorf("closest %q, want %q", nf.Closest, want)
	}
	if want := `unknown model "wombta-large"; closest: acme/wombat-large-2, zoo/wombat-large-3`; err.Error() != want {
		t.Errorf("message\n got %q\nwant %q", err.Error(), want)
	}

	// A provider restricts the suggestions; "provider/id" is compared whole.
	_, err = reg.Resolve("zoo", "wombat-large-9")
	if !errors.As(err, &nf) || !slices.Equal(nf.Closest, []string{"zoo/wombat-large-3"}) || nf.Pattern != "zoo/wombat-large-9" {
		t.Errorf("with provider: %v", err)
	}
	if got := reg.Closest("", "acme/quoka-1", 3); !slices.Equal(got, []string{"acme/quokka-1"}) {
		t.Errorf("provider/id pattern: %q", got)
	}

	// Nothing near: no suggestion, and the message says only what failed.
	_, err = reg.Resolve("", "xylophone-zz-9")
	if !errors.As(err, &nf) || len(nf.Closest) != 0 || err.Error() != `unknown model "xylophone-zz-9"` {
		t.Errorf("far pattern: %v", err)
	}
}
