package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// statListFile and readListFile (straight system calls on Linux) give
// what the package os versions give.
func TestListFileReadersMatchOS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := write("big.jsonl", strings.Repeat("x", 300000))
	small := write("small.jsonl", "{}\n")
	empty := write("empty.jsonl", "")
	future := write("future.jsonl", "{}")
	if err := os.Chtimes(future, time.Now(), time.Date(2400, 1, 2, 3, 4, 5, 6, time.UTC)); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.jsonl")
	os.Mkdir(sub, 0o755)
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(small, link)
	dangling := filepath.Join(dir, "dangling.jsonl")
	os.Symlink(filepath.Join(dir, "nothing"), dangling)
	var buf, obuf []byte
	for _, p := range []string{big, small, empty, future, sub, link, dangling, filepath.Join(dir, "missing.jsonl"), "bad\x00path"} {
		size, mtime, ok := statListFile(p)
		osize, omtime, ook := osStatListFile(p)
		if size != osize || mtime != omtime || ok != ook {
			t.Errorf("stat %s: %d %d %v, os %d %d %v", p, size, mtime, ok, osize, omtime, ook)
		}
		var data, odata []byte
		var mt, omt time.Time
		data, size, mt, ok, buf = readListFile(p, buf)
		odata, osize, omt, ook, obuf = osReadListFile(p, obuf)
		if string(data) != string(odata) || size != osize || !mt.Equal(omt) || ok != ook {
			t.Errorf("read %s: %d bytes, size %d, %v, %v; os %d bytes, size %d, %v, %v", p, len(data), size, mt, ok, len(odata), osize, omt, ook)
		}
	}
}
