package cli

import (
	"slices"
	"testing"
)

func TestParseArgsSeparatesFileArguments(t *testing.T) {
	a, err := ParseArgs([]string{"@a.txt", "-p", "hello", "@", "--", "@b.png", "--not-a-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.txt", "b.png"}; !slices.Equal(a.FileArgs, want) {
		t.Errorf("FileArgs = %q, want %q", a.FileArgs, want)
	}
	if want := []string{"hello", "@", "--not-a-flag"}; !slices.Equal(a.Messages, want) {
		t.Errorf("Messages = %q, want %q", a.Messages, want)
	}
}

func TestInitialMessage(t *testing.T) {
	for _, c := range []struct{ stdin, files, first, want string }{
		{"", "", "hi", "hi"},
		{"", "<file name=\"/a\">\nx\n</file>\n", "hi", "<file name=\"/a\">\nx\n</file>\nhi"},
		{"piped", "", "hi", "piped\n\nhi"},
		{"piped", "", "", "piped"},
		{"", "", "", ""},
	} {
		if got := initialMessage(c.stdin, c.files, c.first); got != c.want {
			t.Errorf("initialMessage(%q, %q, %q) = %q, want %q", c.stdin, c.files, c.first, got, c.want)
		}
	}
}
