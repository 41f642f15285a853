package extensions

import (
	"sync"
	"time"
)

// closeWait bounds how long Host.Close waits for the goroutines of its
// extension processes after stopping them (they end within moments of
// the process's exit; the bound is for a process the kernel will not reap).
const closeWait = 10 * time.Second

// background counts the goroutines that serve the extension processes
// (their input, output, stderr, exit, requests and restarts), so that
// Close returns only once none of them is left to touch the host or the
// session after their owner is gone. Unlike a sync.WaitGroup it may be
// added to while someone waits.
type background struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0
}

// Go runs f on a goroutine of its own, counted until f returns.
func (b *background) Go(f func()) {
	b.mu.Lock()
	if b.n == 0 || b.idle == nil {
		b.idle = make(chan struct{})
	}
	b.n++
	b.mu.Unlock()
	go func() {
		defer b.done()
		f()
	}()
}

func (b *background) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.n == 0 {
		close(b.idle)
	}
}

// Wait waits until no counted goroutine is running, or d has passed; it
// reports whether none is.
func (b *background) Wait(d time.Duration) bool {
	b.mu.Lock()
	if b.n == 0 {
		b.mu.Unlock()
		return true
	}
	idle := b.idle
	b.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}
