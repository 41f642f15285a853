package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// becomeSubreaper makes orphaned grandchildren of the test reparent to the
// test process, so it can reap them: in containers PID 1 may never reap
// zombies, which would keep a killed process group "alive" forever.
func becomeSubreaper(t *testing.T) {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Skipf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
}

// waitGroupGone reaps orphans and waits until no process of the group (and
// none of the background children recorded in dir/kids) exists.
func waitGroupGone(t *testing.T, dir string, pgid int) {
	t.Helper()
	var kids []int
	b, _ := os.ReadFile(filepath.Join(dir, "kids"))
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			kids = append(kids, pid)
		}
	}
	if len(kids) != 3 {
		t.Fatalf("expected 3 background children, got %q", b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		err := syscall.Kill(-pgid, 0)
		alive := 0
		for _, pid := range kids {
			if !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				alive++
			}
		}
		if errors.Is(err, syscall.ESRCH) && alive == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still exists (kill 0: %v), %d children alive", pgid, err, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupCommand leaves background children (recorded in ./kids), records its
// process group id in ./pgid and keeps running.
func groupCommand(dir string) string {
	return "sleep 100 & echo $! >> kids; sleep 100 & echo $! >> kids; (sleep 100; echo never) & echo $! >> kids; " +
		"echo $$ > pgid.tmp && mv pgid.tmp pgid; echo started; sleep 100"
}

func readPgid(t *testing.T, dir string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "pgid")); err == nil {
			pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pgid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("command did not start")
	return 0
}

func TestBashAbortKillsProcessGroup(t *testing.T) {
	becomeSubreaper(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	onUpdate := cancelOnOutput("started", func() { close(started) })
	done := make(chan Result, 1)
	go func() {
		tool, _ := ByName(Env{Cwd: dir}, "bash")
		r, _ := tool.Execute(ctx, Call{Args: []byte(`{"command":` + strconv.Quote(groupCommand(dir)) + `}`), OnUpdate: onUpdate})
		done <- r
	}()
	select {
	case <-started:
	case r := <-done:
		t.Fatalf("bash returned before printing started: %q", text(r))
	case <-time.After(time.Minute):
		t.Fatal("the command did not start within a minute")
	}
	pgid := readPgid(t, dir)
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Fatalf("group not running: %v", err)
	}
	cancel()
	select {
	case r := <-done:
		wantError(t, r, "started\n\n\nCommand aborted")
	case <-time.After(30 * time.Second):
		t.Fatal("bash did not return after abort")
	}
	waitGroupGone(t, dir, pgid)
}

// The timeout (3 s: time enough to start the children and print on a busy
// machine) kills the whole group.
func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	becomeSubreaper(t)
	dir := t.TempDir()
	r := run(t, Env{Cwd: dir}, "bash", map[string]any{"command": groupCommand(dir), "timeout": 3})
	wantError(t, r, "started\n\n\nCommand timed out after 3 seconds")
	waitGroupGone(t, dir, readPgid(t, dir))
}

func TestUserBashCancelKillsProcessGroup(t *testing.T) {
	becomeSubreaper(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out strings.Builder // written by onDelta only
	onDelta := func(s string) {
		out.WriteString(s)
		if strings.Contains(out.String(), "started") {
			cancel()
		}
	}
	res := RunUserBash(ctx, Env{Cwd: dir}, groupCommand(dir), onDelta)
	if !res.Cancelled || res.ExitCode != nil || res.Output != "started\n" {
		t.Fatalf("result %+v", res)
	}
	waitGroupGone(t, dir, readPgid(t, dir))
}
