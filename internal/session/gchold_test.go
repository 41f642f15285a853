package session

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// gcPercent reads the GC percentage without setting it (setting it back,
// as debug.SetGCPercent would need, could undo a restore running at the
// same moment on the cleanup goroutine).
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64()) // off (-1) reads as the all-ones uint64

}

func TestHoldGCIsCountedAndRestored(t *testing.T) {
	orig := debug.SetGCPercent(137)
	defer debug.SetGCPercent(orig)
	runtime.GC()

	r1 := holdGC()
	r2 := holdGC()
	if p := gcPercent(); p != -1 {
		t.Fatalf("while held: GC percent %d, want -1", p)
	}
	r1()
	r1() // a second call of the same release does nothing
	if p := gcPercent(); p != -1 {
		t.Fatalf("one holder left: GC percent %d, want -1", p)
	}
	keep := make([][]byte, 0, 64)
	for i := 0; i < 64; i++ {
		keep = append(keep, make([]byte, 256<<10)) // 16 MB "loaded" while held
	}
	r2()
	if p := gcPercent(); p <= 137 {
		t.Fatalf("after the load: GC percent %d, want it raised above 137 for one cycle", p)
	}
	// After the next cycle the setting is back.
	deadline := time.Now().Add(30 * time.Second)
	for gcPercent() != 137 {
		if time.Now().After(deadline) {
			t.Fatalf("GC percent still %d after a collection, want 137", gcPercent())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(keep)

	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holdGC()()
		}()
	}
	wg.Wait()
	for gcPercent() != 137 {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("after concurrent holds: GC percent %d, want 137", gcPercent())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestHoldGCKeepsOff(t *testing.T) {
	orig := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(orig)
	holdGC()()
	if p := gcPercent(); p != -1 {
		t.Fatalf("GOGC=off before the hold: GC percent %d after it, want -1", p)
	}
}
