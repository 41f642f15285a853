//go:build unix

package core

import (
	"os"
	"testing"
)

// The spill files of the user's bash commands are deleted when the session
// closes.
func TestCloseRemovesSpillFiles(t *testing.T) {
	s, _ := newTestSession(t, `{"turns":[]}`)
	res, err := s.RunBash("b1", "seq 1 100000", false)
	if err != nil {
		t.Fatal(err)
	}
	p := res.FullOutputPath
	if p == "" {
		t.Fatalf("no spill file: %+v", res)
	}
	t.Cleanup(func() { os.Remove(p) })
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("spill file missing while the session is open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("%s still exists after Close (%v)", p, err)
	}
}
