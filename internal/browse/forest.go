package browse

import (
	"hash/maphash"
	"sort"
	"time"

	"github.com/pisces-agent/pisces/internal/session"
)

// forest is a session's tree in index form, built the way session.Tree
// (pi's getTree) builds it: roots are entries whose parent is null, their
// own id or missing, in file order; children are in file order, then
// stably sorted by timestamp; the first entry with an id owns it.
type forest struct {
	entries []*session.Entry
	labels  []string // label of each entry ("" = none)
	roots   []int32
	start   []int32 // children of i: kids[start[i]:start[i+1]]
	kids    []int32
}

func newForest(s *session.Session) *forest {
	entries := s.Entries()
	n := len(entries)
	f := &forest{entries: entries, labels: make([]string, n), start: make([]int32, n+1), kids: make([]int32, 0, n)}
	idx := newIDIndex(entries)
	for target, label := range s.Labels() {
		if i := idx.find(target); i >= 0 {
			f.labels[i] = label
		}
	}
	parent := make([]int32, n)
	for i, e := range entries {
		p := int32(-1)
		if e.ParentID != nil && *e.ParentID != e.ID {
			// Most entries follow their parent directly (with no duplicate
			// ids, the previous entry owns its id).
			if i > 0 && !idx.dups && entries[i-1].ID == *e.ParentID {
				p = int32(i - 1)
			} else {
				p = idx.find(*e.ParentID)
			}
		}
		parent[i] = p
		if p < 0 {
			f.roots = append(f.roots, int32(i))
		} else {
			f.start[p+1]++
		}
	}
	for i := 1; i <= n; i++ {
		f.start[i] += f.start[i-1]
	}
	f.kids = f.kids[:n-len(f.roots)]
	fill := make([]int32, n)
	copy(fill, f.start[:n])
	for i, p := range parent {
		if p >= 0 {
			f.kids[fill[p]] = int32(i)
			fill[p]++
		}
	}
	for i := 0; i < n; i++ {
		c := f.kids[f.start[i]:f.start[i+1]]
		if len(c) > 1 {
			ms := make(map[int32]int64, len(c))
			for _, k := range c {
				ms[k] = isoMs(entries[k].Timestamp)
			}
			sort.SliceStable(c, func(a, b int) bool { return ms[c[a]] < ms[c[b]] })
		}
	}
	return f
}

func (f *forest) children(i int32) []int32 { return f.kids[f.start[i]:f.start[i+1]] }

// isoMs is an entry timestamp in Unix milliseconds (0 when invalid), as the
// session package sorts children.
func isoMs(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// idIndex finds an entry by id: an open-addressing table of entry indexes,
// the first entry with an id owning it (as in session.Tree).
type idIndex struct {
	entries  []*session.Entry
	slots    []int32 // entry index + 1; 0 = empty
	mask     uint64
	hashSeed maphash.Seed
	dups     bool // some id belongs to more than one entry
}

func newIDIndex(entries []*session.Entry) *idIndex {
	size := 16
	for size < 2*len(entries) {
		size <<= 1
	}
	x := &idIndex{entries: entries, slots: make([]int32, size), mask: uint64(size - 1), hashSeed: maphash.MakeSeed()}
	for i, e := range entries {
		if e.ID == "" {
			continue
		}
		h := maphash.String(x.hashSeed, e.ID) & x.mask
		for {
			j := x.slots[h]
			if j == 0 {
				x.slots[h] = int32(i + 1)
				break
			}
			if entries[j-1].ID == e.ID {
				x.dups = true
				break
			}
			h = (h + 1) & x.mask
		}
	}
	return x
}

// find returns the index of the entry owning id, or -1.
func (x *idIndex) find(id string) int32 {
	if id == "" {
		return -1
	}
	h := maphash.String(x.hashSeed, id) & x.mask
	for {
		j := x.slots[h]
		if j == 0 {
			return -1
		}
		if x.entries[j-1].ID == id {
			return j - 1
		}
		h = (h + 1) & x.mask
	}
}
