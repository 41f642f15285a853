package session

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Loading a big session allocates megabytes that all stay live: the file
// buffer, the entries and the decoded messages. Left alone, the collector
// starts a cycle each time the heap doubles on the way (two or three
// during a 20000-entry open in a fresh process) and each cycle finds no
// garbage; while it marks, every pointer written into a fresh page first
// reads that page (the write barrier), which costs a second page fault and
// a TLB flush on every CPU. Opening a 20000-entry session took about a
// third more CPU time that way (docs/performance.md). So a big load holds
// the collector off until it is done.
//
// When the last load ends, the collector is not simply turned back on:
// its goal is still based on the heap it marked before the load, so it
// would start a cycle at once and mark the whole loaded session while the
// client's next command (get_messages, get_session_tree) runs. Instead the
// percentage is raised for one cycle so that the next collection comes
// when the heap has grown by GOGC percent over what it is after the load,
// as if the loaded data had been marked; once that cycle has run, the
// setting is restored. This is what GOGC means, applied to data the
// runtime has not marked yet.
//
// holdGC is process-wide and counted, so that concurrent loads (several
// sessions in one server) end the hold only when the last one is done. A
// memory limit (GOMEMLIMIT) still triggers collections while held.

// minHoldGC is the file size from which a load holds the collector off.
const minHoldGC = 4 << 20

var gcHold struct {
	sync.Mutex
	n       int  // loads holding the collector off
	base    int  // the percentage to return to
	raised  bool // the percentage is raised until the next cycle ends
	restore int  // generation of the pending restore
}

// holdGC turns the collector off until the returned func is called.
func holdGC() (release func()) {
	gcHold.Lock()
	if gcHold.n == 0 {
		old := debug.SetGCPercent(-1)
		if !gcHold.raised {
			gcHold.base = old
		}
		gcHold.raised = false
		gcHold.restore++ // cancels a pending restore
	}
	gcHold.n++
	gcHold.Unlock()
	var once sync.Once
	return func() { once.Do(releaseGC) }
}

func releaseGC() {
	gcHold.Lock()
	defer gcHold.Unlock()
	gcHold.n--
	if gcHold.n > 0 {
		return
	}
	base := gcHold.base
	p := raisedPercent(base)
	if p <= base {
		debug.SetGCPercent(base)
		return
	}
	debug.SetGCPercent(p)
	gcHold.raised = true
	gen := gcHold.restore
	// The sentinel becomes unreachable now; its cleanup runs after the
	// next cycle, which is when the raised percentage has done its job.
	sentinel := new(gcSentinel)
	runtime.AddCleanup(sentinel, restoreGC, gen)
}

type gcSentinel struct {
	_ *int // a pointer, so that the tiny allocator never batches it
	_ [2]uint64
}

func restoreGC(gen int) {
	gcHold.Lock()
	defer gcHold.Unlock()
	if gcHold.raised && gcHold.restore == gen && gcHold.n == 0 {
		debug.SetGCPercent(gcHold.base)
		gcHold.raised = false
	}
}

// raisedPercent is the percentage that puts the next collection at the
// current heap plus base percent, given the live heap the collector last
// marked; base itself when that cannot be worked out or is no higher.
func raisedPercent(base int) int {
	if base <= 0 {
		return base
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return base
	}
	live, heap := float64(s[0].Value.Uint64()), float64(s[1].Value.Uint64())
	if heap <= live {
		return base
	}
	goal := heap * (1 + float64(base)/100)
	// The runtime's goal is the larger of live*(1+p/100) and its minimum
	// heap, 4 MB*p/100 (all there is before the first cycle, live = 0).
	p := goal / (4 << 20) * 100
	if live > 0 {
		p = min(p, (goal/live-1)*100)
	}
	if p > math.MaxInt32 {
		p = math.MaxInt32
	}
	return max(base, int(p))
}
