package sessgen

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/pisces-agent/pisces/internal/session"
)

// The generated files must load in Pisces' store without a skipped line,
// with the expected entries, leaf and tree.
func TestGeneratedSessionLoads(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []Options{
		{Entries: 500, Seed: 1},
		{Entries: 2000, Seed: 2, BranchEvery: 100, LabelEvery: 250},
	} {
		p, err := WriteFile(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		s, rep, err := session.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Skipped != 0 || rep.Migrated || rep.TornTail {
			t.Fatalf("%s: load report %+v", p, rep)
		}
		if s.Len() != o.Entries {
			t.Fatalf("%d entries, want %d", s.Len(), o.Entries)
		}
		if s.ID() != ID(o.Seed) {
			t.Fatalf("id %s", s.ID())
		}
		var b bytes.Buffer
		leaf, _ := Write(&b, o)
		if s.LeafID() != leaf {
			t.Fatalf("leaf %s, want %s", s.LeafID(), leaf)
		}
		roots := s.Tree()
		if len(roots) != 1 {
			t.Fatalf("%d roots", len(roots))
		}
		if len(s.BuildContext().Messages) == 0 {
			t.Fatal("no messages in context")
		}
		if o.LabelEvery > 0 && len(s.Labels()) == 0 {
			t.Fatal("no labels")
		}
		s.Close()
	}
}

func TestWriteManyLists(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if err := WriteMany(dir, 20, 50, "/home/u/proj"); err != nil {
		t.Fatal(err)
	}
	infos, err := session.List(dir, "")
	if err != nil || len(infos) != 20 {
		t.Fatalf("%d sessions, %v", len(infos), err)
	}
	if infos[0].MessageCount != 48 {
		t.Fatalf("messageCount %d", infos[0].MessageCount)
	}
}
