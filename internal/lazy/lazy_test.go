package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestGetBuildsOnce(t *testing.T) {
	var calls atomic.Int32
	v := &Value[[]int]{New: func() []int {
		calls.Add(1)
		return []int{1, 2, 3}
	}}
	if calls.Load() != 0 {
		t.Fatal("New ran before the first Get")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := v.Get(); len(got) != 3 || got[2] != 3 {
				t.Errorf("Get = %v", got)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("New ran %d times, want 1", n)
	}
}

// pkgLevel is declared as the packages that use Value declare theirs.
var pkgLevel = Value[map[string]bool]{New: func() map[string]bool { return map[string]bool{"a": true} }}

func TestPackageLevel(t *testing.T) {
	if !pkgLevel.Get()["a"] || pkgLevel.Get()["b"] {
		t.Fatalf("pkgLevel = %v", pkgLevel.Get())
	}
}
