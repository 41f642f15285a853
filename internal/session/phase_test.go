package session

import (
	"bytes"
	"testing"
	"time"
)

func TestPhases(t *testing.T) {
	data := genSession(20000, 42, "/x")
	lines := bytes.Split(data, []byte("\n"))
	t0 := time.Now()
	for _, l := range lines { validJSON(l) }
	t1 := time.Now()
	var mb []member
	for _, l := range lines { mb, _ = members(mb[:0], l) }
	t2 := time.Now()
	var raws [][]byte
	for _, l := range lines { if r := messageRaw(l); r != nil { raws = append(raws, r) } }
	t3 := time.Now()
	for _, r := range raws { fastDecode(r) }
	t4 := time.Now()
	es := make([]Entry, len(lines))
	for i, l := range lines { mb, _ = members(mb[:0], l); parseEntry(&es[i], l, mb) }
	t5 := time.Now()
	t.Logf("validate %v members %v messageRaw %v fastDecode %v parseEntry %v", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3), t5.Sub(t4))
}
