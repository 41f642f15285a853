package session

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/pisces-agent/pisces/bench/sessgen"
	"github.com/pisces-agent/pisces/internal/ai"
)

func decodedCount(s *Session) int {
	n := 0
	for _, e := range s.Entries() {
		if e.msg.Load() != nil {
			n++
		}
	}
	return n
}

// Opening a session and answering what a switch answers (the context's
// message count, model and thinking level, the tree, get_messages) decode
// no message but the last assistant one; the messages decoded later are
// the ones encoding/json decodes from the file, even after the file was
// rewritten under the session.
func TestMessagesDecodedOnFirstUse(t *testing.T) {
	dir := t.TempDir()
	p, err := sessgen.WriteFile(dir, sessgen.Options{Entries: 3000, Seed: 9, BranchEvery: 40, LabelEvery: 90})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	s, _ := mustOpen(t, p)
	if n := decodedCount(s); n != 0 {
		t.Fatalf("%d messages decoded by Open", n)
	}
	info := s.Info()
	if info.Provider != "mock" || info.MessageCount < 1000 {
		t.Fatalf("info %+v", info)
	}
	s.HasEntryType(TypeThinkingLevelChange)
	s.Tree()
	for _, e := range s.Entries() {
		e.Role()
	}
	if _, err := s.MessagesJSON(); err != nil {
		t.Fatal(err)
	}
	if n := decodedCount(s); n > 1 {
		t.Fatalf("%d messages decoded without being used", n)
	}

	// Another program rewrites the file (as a migration does): nothing
	// read later comes from it.
	if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := s.BuildContext()
	if len(ctx.Messages) != info.MessageCount {
		t.Fatalf("%d context messages, Info said %d", len(ctx.Messages), info.MessageCount)
	}
	byID := map[string][]byte{}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if raw := messageRaw(l); raw != nil {
			byID[idOf(l)] = raw
		}
	}
	for i, m := range ctx.Messages {
		want, err := ai.DecodeMessage(byID[ctx.EntryIDs[i]])
		if err != nil || !reflect.DeepEqual(m, want) {
			t.Fatalf("message %d (%s) differs from encoding/json's", i, ctx.EntryIDs[i])
		}
	}
	// Every entry's message, off the branch too.
	for _, e := range s.Entries() {
		if e.Type == TypeMessage {
			if want, _ := ai.DecodeMessage(byID[e.ID]); !reflect.DeepEqual(e.Message(), want) {
				t.Fatalf("entry %s differs from encoding/json's", e.ID)
			}
		}
	}
}

// Goroutines that use a message for the first time at once all get the
// same value (run with -race).
func TestConcurrentFirstUse(t *testing.T) {
	p, err := sessgen.WriteFile(t.TempDir(), sessgen.Options{Entries: 3000, Seed: 10})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := mustOpen(t, p)
	entries := s.Entries()
	got := make([][]ai.Message, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch g {
			case 0:
				DecodeMessages(entries)
			case 1:
				s.BuildContext()
			}
			for i := range entries {
				e := entries[len(entries)-1-i]
				if g%2 == 0 {
					e = entries[i]
				}
				got[g] = append(got[g], e.Message())
			}
		}()
	}
	wg.Wait()
	for i := range entries {
		e := entries[i]
		for g := range got {
			k := i
			if g%2 == 1 {
				k = len(entries) - 1 - i
			}
			if m := got[g][k]; m != e.Message() {
				t.Fatalf("entry %d: goroutine %d got another value", i, g)
			}
		}
	}
}

// A session forked or cloned from a loaded one keeps its messages
// undecoded where the lines keep their bytes (a re-chained parentId).
func TestForkKeepsMessagesUndecoded(t *testing.T) {
	dir := t.TempDir()
	p, err := sessgen.WriteFile(dir, sessgen.Options{Entries: 400, Seed: 11, LabelEvery: 25})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := mustOpen(t, p)
	c, err := s.Clone(filepath.Join(dir, "clone"))
	if err != nil {
		t.Fatal(err)
	}
	if n := decodedCount(c); n > 1 {
		t.Errorf("clone decoded %d messages", n)
	}
	got, want := c.BuildContext(), s.BuildContext()
	if !reflect.DeepEqual(got.Messages, want.Messages) {
		t.Errorf("clone's context differs")
	}
	a, _ := c.MessagesJSON()
	b, _ := s.MessagesJSON()
	if !bytes.Equal(a.AppendTo(nil), b.AppendTo(nil)) {
		t.Errorf("clone's get_messages differs")
	}
}
