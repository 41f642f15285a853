package session

import (
	"bytes"
	"io"
	"math"
	"os"
	"runtime"
	"sync/atomic"
)

// Loading the entries of a big file (see docs/performance.md).
//
// The entry lines are cut at line boundaries into several chunks per core;
// every core takes the next unparsed chunk until none is left, so a core
// that is slowed down (or busy with the garbage collector) does less of
// the work instead of holding the others up. Each chunk is parsed into its
// own slabs of entries (a few hundred entries per allocation, not one
// each). The calling goroutine also hands the parsed chunks, strictly in
// file order, to the indexing callback, between chunks of its own and
// while the other cores finish theirs, so ids, the leaf and the labels come
// out exactly as with a sequential parse.

const (
	minChunk = 64 << 10 // smallest chunk worth handing to another core
	slabLen  = 256      // entries per allocation
)

// loadEntries parses the entry lines of data (the file after its header)
// and calls add with each chunk's entries, in file order, on the calling
// goroutine. estimate is a guess of the total number of entries, for
// sizing indexes. It returns the number of blank or malformed lines and
// whether the last line was torn.
func loadEntries(data []byte, tornPossible bool, add func(slabs [][]Entry, estimate int)) (skipped int, torn bool) {
	procs := runtime.GOMAXPROCS(0)
	nChunks := 1
	if procs > 1 && len(data) >= 2*minChunk {
		nChunks = min(8*procs, len(data)/minChunk, 64)
	}
	bounds := lineBounds(data, nChunks)
	nChunks = len(bounds) - 1
	results := make([]chunkResult, nChunks)
	done := make([]chan struct{}, nChunks)
	for i := range done {
		done[i] = make(chan struct{})
	}
	var pool *entryPool
	if len(data) >= minHoldGC {
		pool = newEntryPool(estimateLines(data))
	}
	var next atomic.Int32
	// parseNext parses the next unparsed chunk; false when none is left.
	parseNext := func(p *parser) bool {
		c := int(next.Add(1)) - 1
		if c >= nChunks {
			return false
		}
		last := c == nChunks-1
		p.parse(&results[c], data[bounds[c]:bounds[c+1]], tornPossible && last)
		close(done[c])
		return true
	}
	for w := 1; w < min(procs, nChunks); w++ {
		go func() {
			p := &parser{ar: arena{chunkLen: 256}, pool: pool}
			for parseNext(p) {
			}
		}()
	}

	estimate := 0
	added := 0 // chunks handed to add
	addChunk := func() {
		r := &results[added]
		if added == 0 {
			// Entries per byte of the first chunk, for the whole file.
			estimate = r.count + 16
			if n := bounds[1] - bounds[0]; n > 0 {
				estimate = int(int64(r.count)*int64(len(data))/int64(n)) + 16
			}
		}
		add(r.slabs, estimate)
		r.slabs = nil
		skipped += r.skipped
		torn = torn || r.torn
		added++
	}
	p := &parser{ar: arena{chunkLen: 256}, pool: pool}
	for {
		// Index what is ready, then parse another chunk.
		for added < nChunks && isClosed(done[added]) {
			addChunk()
		}
		if !parseNext(p) {
			break
		}
	}
	for added < nChunks {
		<-done[added]
		addChunk()
	}
	return skipped, torn
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// lineBounds cuts data into about n pieces that end just after a newline
// (the last one at the end of data). It returns the n'+1 boundaries.
func lineBounds(data []byte, n int) []int {
	bounds := make([]int, 1, n+1)
	for w := 1; w < n; w++ {
		at := len(data) * w / n
		if at < bounds[len(bounds)-1] {
			at = bounds[len(bounds)-1]
		}
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			break
		}
		if at+i+1 < len(data) {
			bounds = append(bounds, at+i+1)
		}
	}
	return append(bounds, len(data))
}

type chunkResult struct {
	slabs   [][]Entry
	count   int
	skipped int
	torn    bool
}

// parser is one core's state: its arena and current slab.
type parser struct {
	ar      arena
	slab    []Entry  // free entries (len 0, capacity left)
	parents []string // parentId values, parallel to slab
	pool    *entryPool
}

// parse parses one chunk. Its entries are taken from the current slab,
// which is cut after them: slabs never straddle chunks, since chunks are
// indexed in file order, not in the order they were parsed.
func (p *parser) parse(r *chunkResult, chunk []byte, tornPossible bool) {
	cut := func() {
		if n := len(p.slab); n > 0 {
			r.slabs = append(r.slabs, p.slab[:n:n])
			p.slab, p.parents = p.slab[n:], p.parents[n:]
		}
	}
	// Members go to a buffer on the stack: filling one on the heap would
	// cost a write barrier per member whenever the collector is marking.
	var mstack [16]member
	pos := 0
	for pos < len(chunk) {
		line, next := nextLine(chunk, pos)
		pos = next
		if len(bytes.TrimSpace(line)) == 0 {
			r.skipped++
			continue
		}
		ms, lm, ok := scanEntryLine(mstack[:0], line, &p.ar)
		if !ok {
			r.skipped++
			if next == len(chunk) && tornPossible {
				r.torn = true
			}
			continue
		}
		if len(p.slab) == cap(p.slab) {
			cut()
			p.slab, p.parents = p.pool.take()
		}
		p.slab = p.slab[:len(p.slab)+1]
		i := len(p.slab) - 1
		e := &p.slab[i]
		parseEntryInto(e, line, ms, &p.parents[i])
		if e.Type == TypeMessage {
			if lm.end > 0 {
				e.msgAt, e.msgEnd, e.role = int32(lm.at), int32(lm.end), lm.role
				if back := lm.end - lm.stop; lm.stop > 0 && back <= math.MaxUint16 {
					e.stopBack = uint16(back)
				}
			} else if lm.msg != nil {
				e.setMessage(lm.msg, p.ar.box())
			}
		}
		if lm.compact {
			e.flags |= flagCompact
		}
		r.count++
	}
	cut()
}

// estimateLines guesses the number of lines of data from its first
// megabyte, generously.
func estimateLines(data []byte) int {
	sample := data[:min(len(data), 1<<20)]
	n := bytes.Count(sample, []byte{'\n'}) + 1
	return int(int64(n)*int64(len(data))/int64(len(sample))*9/8) + 64
}

// entryPool hands out the entries of a big load from one allocation whose
// memory is advised to use huge pages (adviseHuge): 20000 entries are
// megabytes of fresh memory. Slabs are taken from a shared counter; when
// the estimate falls short, they are allocated one by one.
type entryPool struct {
	entries []Entry
	parents []string
	next    atomic.Int64 // slabs handed out
}

func newEntryPool(n int) *entryPool {
	n = (n + slabLen - 1) / slabLen * slabLen
	return &entryPool{entries: hugeSlice[Entry](n, true), parents: hugeSlice[string](n, false)}
}

// take returns an empty slab of slabLen entries and its parents.
func (p *entryPool) take() ([]Entry, []string) {
	if p != nil {
		k := int(p.next.Add(1) - 1)
		if at := k * slabLen; at+slabLen <= len(p.entries) {
			return p.entries[at : at : at+slabLen], p.parents[at : at+slabLen : at+slabLen]
		}
	}
	return make([]Entry, 0, slabLen), make([]string, slabLen)
}

// readFile is os.ReadFile, except that a big file is read by two cores at
// once (copying it from the page cache is a good part of opening it).
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() || int64(int(size)) != size {
		return io.ReadAll(f)
	}
	var buf []byte
	if size >= minHoldGC {
		buf = hugeSlice[byte](int(size)+512, true)[:0]
	} else {
		buf = make([]byte, 0, size+512)
	}
	off := int64(0)
	if size >= 1<<20 && runtime.GOMAXPROCS(0) > 1 {
		buf = buf[:size]
		half := size / 2
		var n2 int
		var err2 error
		done := make(chan struct{})
		go func() {
			n2, err2 = f.ReadAt(buf[half:], half)
			close(done)
		}()
		n1, err1 := f.ReadAt(buf[:half], 0)
		<-done
		if err1 != nil || err2 != nil || int64(n1) != half || int64(n2) != size-half {
			// Shorter than a moment ago, or unreadable: start again.
			buf, off = buf[:0], 0
		} else {
			off = size
		}
	}
	// The rest (all of a small file), up to the end like os.ReadFile, even
	// if it grew since Stat.
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.ReadAt(buf[len(buf):cap(buf)], off)
		buf = buf[:len(buf)+n]
		off += int64(n)
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
