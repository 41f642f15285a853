package session

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
)

// idIndex maps entry ids to positions in Session.entries, like a
// map[string]int where setting an id again replaces its position. It is
// specialised for pi's ids (8 hex digits hash with one multiplication) and
// small: a slot is a 32-bit hash fingerprint and a position, so that the
// table of a 20000-entry session stays in cache and an insert never
// touches an entry unless the fingerprints match. Opening a session
// inserts every id, so this is on the critical path of Open (see
// docs/performance.md).
type idIndex struct {
	slots []idSlot // open addressing, linear probing; len is a power of two
	n     int
}

type idSlot struct {
	h    uint32 // hash of the id
	pos1 int32  // position + 1; 0 = empty slot
}

var (
	idSeed   = maphash.MakeSeed()
	idSeed64 = maphash.String(idSeed, "pisces")
)

func idHash(id string) uint32 {
	if len(id) == 8 {
		x := binary.LittleEndian.Uint64([]byte(id)) // does not escape: no allocation
		hi, lo := bits.Mul64(x^idSeed64, 0xd6e8feb86659fd93)
		return uint32(hi ^ lo)
	}
	return uint32(maphash.String(idSeed, id))
}

func newIDIndex(n int) idIndex {
	size := 16
	for size < 2*n {
		size *= 2
	}
	slots := make([]idSlot, size)
	// Write the fresh table before probing it: a first read of a fresh page
	// maps the shared zero page, and the first write after it costs a
	// second fault and a TLB flush on every CPU (a third of the time of
	// indexing a big session in a new process).
	clear(slots)
	return idIndex{slots: slots}
}

// find returns the position of id in entries, or -1.
func (x *idIndex) find(entries []*Entry, id string) int {
	if x.n == 0 {
		return -1
	}
	h := idHash(id)
	mask := uint32(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.pos1 == 0 {
			return -1
		}
		if s.h == h && entries[s.pos1-1].ID == id {
			return int(s.pos1 - 1)
		}
	}
}

// set makes id refer to entries[pos]; it reports whether id was there
// already.
func (x *idIndex) set(entries []*Entry, id string, pos int) (replaced bool) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	h := idHash(id)
	mask := uint32(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.pos1 == 0 {
			*s = idSlot{h, int32(pos + 1)}
			x.n++
			return false
		}
		if s.h == h && entries[s.pos1-1].ID == id {
			s.pos1 = int32(pos + 1)
			return true
		}
	}
}

// grow doubles the table.
func (x *idIndex) grow() {
	old := x.slots
	*x = newIDIndex(max(8, len(old)))
	mask := uint32(len(x.slots) - 1)
	for _, s := range old {
		if s.pos1 == 0 {
			continue
		}
		i := s.h & mask
		for x.slots[i].pos1 != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
		x.n++
	}
}
