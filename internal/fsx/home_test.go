package fsx

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestHomeDir(t *testing.T) {
	account := t.TempDir()
	defer OverrideAccountHome(func() (string, error) { return account, nil })()

	t.Setenv("HOME", "/home/from-env")
	if h, err := HomeDir(); err != nil || h != "/home/from-env" {
		t.Errorf("HOME set: %q %v", h, err)
	}
	// Unset or relative HOME: the account database.
	for _, v := range []string{"", "relative/home"} {
		t.Setenv("HOME", v)
		if h, err := HomeDir(); err != nil || h != account {
			t.Errorf("HOME=%q: %q %v", v, h, err)
		}
	}
}

func TestHomeDirNone(t *testing.T) {
	for name, lookup := range map[string]func() (string, error){
		"lookup fails": func() (string, error) { return "", errors.New("no such user") },
		"empty":        func() (string, error) { return "", nil },
		"relative":     func() (string, error) { return "home", nil },
	} {
		t.Run(name, func(t *testing.T) {
			defer OverrideAccountHome(lookup)()
			t.Setenv("HOME", "")
			h, err := HomeDir()
			if !errors.Is(err, ErrNoHome) || h != "" || !strings.Contains(err.Error(), "HOME is unset") {
				t.Fatalf("%q %v", h, err)
			}
			t.Setenv("HOME", "rel")
			if _, err := HomeDir(); err == nil || !strings.Contains(err.Error(), `HOME is not an absolute path: "rel"`) {
				t.Fatalf("relative HOME: %v", err)
			}
			if p, err := ExpandHome("~/x"); err == nil || p != "" || !strings.Contains(err.Error(), `"~/x"`) {
				t.Fatalf("ExpandHome: %q %v", p, err)
			}
			// Paths that do not need the home directory are kept.
			if p, err := ExpandHome("a/~/b"); err != nil || p != "a/~/b" {
				t.Fatalf("ExpandHome plain: %q %v", p, err)
			}
		})
	}
}

func TestExpandHome(t *testing.T) {
	t.Setenv("HOME", "/h")
	for in, want := range map[string]string{"~": "/h", "~/a/b": filepath.Join("/h", "a/b"), "~user/x": "~user/x", "/abs": "/abs", "rel": "rel"} {
		if got, err := ExpandHome(in); err != nil || got != want {
			t.Errorf("ExpandHome(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
