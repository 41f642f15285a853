package session

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// DecodeMessages decodes the messages of entries that have not been
// decoded yet, all at once: a caller that is about to use the messages of
// many entries (a tree projection, an export) saves most of the cost of
// decoding them one by one. Entry.Message gives the same values either way.
func DecodeMessages(entries []*Entry) {
	var todo []*Entry
	for _, e := range entries {
		if e.Type == TypeMessage && e.msgEnd > 0 && e.msg.Load() == nil {
			todo = append(todo, e)
		}
	}
	decodeEntries(todo)
}

// minParallelDecode is the number of messages from which decodeEntries
// uses every core.
const minParallelDecode = 2048

// decodeEntries decodes the verbatim messages of es (entries whose message
// is decoded already are skipped), allocating them in chunks.
func decodeEntries(es []*Entry) {
	procs := runtime.GOMAXPROCS(0)
	if len(es) < minParallelDecode || procs < 2 {
		decodeRange(es)
		return
	}
	// Everything decoded stays live: a collection meanwhile would find
	// nothing to free (see gchold.go).
	defer holdGC()()
	// Parts taken from a shared counter, so that a core held up by other
	// work does less of it; few of them, so that each part's chunks are
	// big enough for huge pages.
	parts := 2 * procs
	var next atomic.Int32
	work := func() {
		for {
			p := int(next.Add(1)) - 1
			if p >= parts {
				return
			}
			decodeRange(es[len(es)*p/parts : len(es)*(p+1)/parts])
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < procs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

func decodeRange(es []*Entry) {
	if len(es) == 0 {
		return
	}
	ar := &arena{chunkLen: min(len(es), 256)}
	if len(es) >= 1024 {
		// The roles are known: the chunks are made to measure (content
		// blocks and durations generously).
		var users, assts, results int
		for _, e := range es {
			switch e.role {
			case roleUser:
				users++
			case roleAssistant:
				assts++
			case roleToolResult:
				results++
			}
		}
		ar.presize(users, assts, results, users+3*assts/2+results, assts+results, len(es))
	}
	for _, e := range es {
		if e.msgEnd > 0 && e.msg.Load() == nil {
			e.decodeMessage(ar)
		}
	}
}
