package tools

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A command's output goes to a spill file ($TMPDIR/pisces-bash-<16 hex>.log)
// once it is longer than the result shows. The file keeps the first
// spillHeadBytes and the newest spillTailBytes of the output: the tail is a
// ring inside the file while the command runs, put in order with a marker
// for the dropped middle when it ends. Disk use per command is bounded by
// their sum, however long the command prints.
var (
	spillHeadBytes = 1 << 20
	spillTailBytes = 4 << 20
)

// SpillFiles records the spill files made for one owner (a session's tools
// and its user bash commands) so that they can be deleted together when the
// owner ends. The zero value is ready; a nil *SpillFiles records nothing.
type SpillFiles struct {
	mu    sync.Mutex
	paths []string
}

func (s *SpillFiles) add(path string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.paths = append(s.paths, path)
	s.mu.Unlock()
}

// RemoveAll deletes the recorded files. A command still running when it is
// called goes on writing to its (now nameless) file, which the system frees
// when the command ends.
func (s *SpillFiles) RemoveAll() {
	if s == nil {
		return
	}
	s.mu.Lock()
	paths := s.paths
	s.paths = nil
	s.mu.Unlock()
	for _, p := range paths {
		_ = os.Remove(p)
	}
}

// spillFile is one command's spill file.
type spillFile struct {
	f       *os.File
	path    string
	written int64 // output bytes received
	ringPos int   // where the next tail byte goes, relative to the ring
	err     error // the first write error; later output is not written
}

func newSpillFile(owner *SpillFiles) (*spillFile, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	path := filepath.Join(os.TempDir(), "pisces-bash-"+hex.EncodeToString(id[:])+".log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	owner.add(path)
	return &spillFile{f: f, path: path}, nil
}

// write adds output: to the head while it has room, then to the tail ring.
func (s *spillFile) write(p []byte) {
	s.written += int64(len(p))
	if s.err != nil {
		return
	}
	head := int64(spillHeadBytes)
	if at := s.written - int64(len(p)); at < head {
		k := int(min(int64(len(p)), head-at))
		if _, s.err = s.f.WriteAt(p[:k], at); s.err != nil {
			return
		}
		p = p[k:]
	}
	if len(p) > spillTailBytes { // only the newest part can stay
		s.ringPos = (s.ringPos + len(p) - spillTailBytes) % spillTailBytes
		p = p[len(p)-spillTailBytes:]
	}
	for len(p) > 0 {
		k := min(len(p), spillTailBytes-s.ringPos)
		if _, s.err = s.f.WriteAt(p[:k], head+int64(s.ringPos)); s.err != nil {
			return
		}
		s.ringPos = (s.ringPos + k) % spillTailBytes
		p = p[k:]
	}
}

// dropped is how many output bytes the file does not keep.
func (s *spillFile) dropped() int64 {
	return max(0, s.written-int64(spillHeadBytes)-int64(spillTailBytes))
}

// close puts the tail in order behind the dropped-span marker (when the ring
// wrapped) and closes the file.
func (s *spillFile) close() {
	if d := s.dropped(); d > 0 && s.err == nil {
		s.err = s.rearrange(d)
	}
	_ = s.f.Close()
}

// rearrange writes head, marker and the ordered tail to a new file that then
// takes the spill file's name. The new file is created exclusively under a
// random name beside the spill file (os.CreateTemp, mode 0600): $TMPDIR is
// shared, the spill file's name is visible, and a symbolic link planted
// under a predictable name would otherwise be followed and its target
// overwritten.
func (s *spillFile) rearrange(dropped int64) error {
	tmp, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	head := int64(spillHeadBytes)
	marker := fmt.Sprintf("\n\n[... %d bytes (%s) of output dropped here: the file keeps the first %s and the last %s ...]\n\n",
		dropped, FormatSize(int(dropped)), FormatSize(spillHeadBytes), FormatSize(spillTailBytes))
	ring := int64(s.ringPos)
	parts := io.MultiReader(
		io.NewSectionReader(s.f, 0, head),
		strings.NewReader(marker),
		io.NewSectionReader(s.f, head+ring, int64(spillTailBytes)-ring),
		io.NewSectionReader(s.f, head, ring),
	)
	_, err = io.Copy(tmp, parts)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, s.path)
	}
	if err != nil {
		_ = os.Remove(name)
	}
	return err
}

// note is what the result adds after the file's path when it is not whole.
func (s *spillFile) note() string {
	d := s.dropped()
	if d == 0 {
		return ""
	}
	return fmt.Sprintf(" (the middle %s was dropped; the file keeps the first %s and the last %s)",
		FormatSize(int(d)), FormatSize(spillHeadBytes), FormatSize(spillTailBytes))
}
