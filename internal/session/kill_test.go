package session

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

const childEnv = "PISCES_SESSION_TEST_CHILD"

// runChild appends to the session named by the environment until killed,
// printing each entry id once its append has returned.
func runChild() {
	warnOutput = io.Discard
	s, _, err := Open(os.Getenv(childEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	big := strings.Repeat("payload ", 2000)
	for i := 0; ; i++ {
		var e *Entry
		if i%3 == 0 {
			e, err = s.AppendMessage(&ai.UserMessage{Content: ai.StringContent(fmt.Sprintf("msg %d %s", i, big[:i%len(big)])), Timestamp: int64(i)})
		} else {
			e, err = s.AppendCustom("tick", []byte(fmt.Sprintf(`{"i":%d}`, i)))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Fprintln(os.Stdout, e.ID)
	}
}

func TestKillMidAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	s, _ := New(Options{Dir: dir, Cwd: "/x"})
	first, err := s.AppendMessage(&ai.UserMessage{Content: ai.StringContent("start"), Timestamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := s.File()
	expected := map[string]bool{first.ID: true}
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 12; iter++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var reported []string
		var wg sync.WaitGroup
		wg.Add(1)
		appending := make(chan struct{})
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if reported = append(reported, sc.Text()); len(reported) == 1 {
					close(appending)
				}
			}
		}()
		// Killed at a random moment once the child has appended (a child
		// still starting up would test nothing).
		select {
		case <-appending:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Fatalf("iteration %d: the child appended nothing within a minute", iter)
		}
		time.Sleep(time.Duration(r.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		wg.Wait()
		cmd.Wait()
		for _, id := range reported {
			expected[id] = true
		}
		s2, rep, err := Open(path)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		got := map[string]bool{}
		for _, e := range s2.Entries() {
			got[e.ID] = true
		}
		for id := range expected {
			if !got[id] {
				t.Fatalf("iteration %d: entry %s reported written but missing (report %+v)", iter, id, rep)
			}
		}
		// Every entry is chained to the one before: nothing glued.
		es := s2.Entries()
		for i := 1; i < len(es); i++ {
			if es[i].ParentID == nil || *es[i].ParentID != es[i-1].ID {
				t.Fatalf("iteration %d: entry %d not chained", iter, i)
			}
		}
		if iter%3 == 1 {
			// Simulate a torn write: cut the last line in the middle.
			last := es[len(es)-1]
			fi, _ := os.Stat(path)
			os.Truncate(path, fi.Size()-int64(len(last.Raw)/2))
			delete(expected, last.ID)
			_, rep, err := Open(path)
			if err != nil || !rep.TornTail {
				t.Fatalf("torn: %v %+v", err, rep)
			}
		}
		t.Logf("iteration %d: %d entries, %d reported, report %+v", iter, len(es), len(reported), rep)
	}
}
