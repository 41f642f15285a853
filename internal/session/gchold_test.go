package session

import (
	"runtime/debug"
	"sync"
	"testing"
)

func TestHoldGCRestoresAfterTheLastRelease(t *testing.T) {
	orig := debug.SetGCPercent(137)
	defer debug.SetGCPercent(orig)

	r1 := holdGC()
	r2 := holdGC()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("while held: GC percent %d, want -1", p)
	}
	r1()
	r1() // a second call of the same release does nothing
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("one holder left: GC percent %d, want -1", p)
	}
	r2()
	if p := debug.SetGCPercent(137); p != 137 {
		t.Fatalf("after the last release: GC percent %d, want 137", p)
	}

	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holdGC()()
		}()
	}
	wg.Wait()
	if p := debug.SetGCPercent(137); p != 137 {
		t.Fatalf("after concurrent holds: GC percent %d, want 137", p)
	}
}
