package session

import (
	"runtime/debug"
	"sync"
)

// Loading a big session allocates megabytes that all stay live: the file
// buffer, the entries and the decoded messages. Left alone, the collector
// starts a cycle each time the heap doubles on the way (two or three
// during a 20,000-entry open in a fresh process) and each cycle finds no
// garbage; while it marks, every pointer written into a fresh page first
// reads that page (the write barrier), which costs a second page fault and
// a TLB flush on every CPU. Opening a 20,000-entry session took about a
// third more CPU time that way (docs/performance.md). So a big load holds
// the collector off until it is done; the one cycle that follows marks the
// loaded session once.
//
// holdGC is process-wide and counted, so that concurrent loads (several
// sessions in one server) restore the setting only when the last one ends.
// A memory limit (GOMEMLIMIT) still triggers collections while held.

// minHoldGC is the file size from which a load holds the collector off.
const minHoldGC = 4 << 20

var gcHold struct {
	sync.Mutex
	n   int
	old int
}

// holdGC turns the collector off until the returned func is called.
func holdGC() (release func()) {
	gcHold.Lock()
	if gcHold.n == 0 {
		gcHold.old = debug.SetGCPercent(-1)
	}
	gcHold.n++
	gcHold.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			gcHold.Lock()
			gcHold.n--
			if gcHold.n == 0 {
				debug.SetGCPercent(gcHold.old)
			}
			gcHold.Unlock()
		})
	}
}
