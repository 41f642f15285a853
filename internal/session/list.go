package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// Info describes a session file for listings (pi's SessionInfo).
type Info struct {
	Path              string
	ID                string
	Cwd               string // "" if the header has none
	Name              string // latest session_info name, "" if none
	ParentSessionPath string
	Created           time.Time // header timestamp
	Modified          time.Time // latest user/assistant message, else header timestamp, else file mtime
	MessageCount      int       // message entries
	FirstMessage      string    // text of the first user message, "(no messages)" if none
	AllMessagesText   string    // user and assistant texts joined by spaces

	// Memo belongs to the listing cache entry this Info came from (nil
	// for an Info built elsewhere). A file that is read again gets a new
	// entry with a new Memo, so what a caller keeps there (browse keeps
	// the session's encoded list item) is dropped exactly when the cached
	// Info is. Whoever changes a field of an Info must set Memo to nil.
	Memo *Memo
}

// Memo is a slot for one value derived from a cached Info. Its methods are
// safe for concurrent use and do nothing on a nil Memo.
type Memo struct{ v atomic.Pointer[any] }

// Load returns the value stored, or nil.
func (m *Memo) Load() any {
	if m == nil {
		return nil
	}
	if p := m.v.Load(); p != nil {
		return *p
	}
	return nil
}

// Store keeps v (the last Store wins).
func (m *Memo) Store(v any) {
	if m != nil {
		m.v.Store(&v)
	}
}

type cacheEntry struct {
	size  int64
	mtime int64
	info  Info
	ok    bool
}

// The listing cache: a file is read again whenever its size or mtime
// changes, so a listing is never stale.
var (
	listCacheMu sync.RWMutex
	listCache   = map[string]cacheEntry{}
)

// ClearListCache empties the in-process listing cache.
func ClearListCache() {
	listCacheMu.Lock()
	listCache = map[string]cacheEntry{}
	listCacheMu.Unlock()
}

// List returns the sessions in dir, newest first. cwdFilter, when not "",
// keeps only sessions whose header cwd equals it (used for a custom
// --session-dir). A missing dir lists nothing.
func List(dir string, cwdFilter string) ([]Info, error) {
	files, err := sessionFiles(dir)
	if err != nil {
		return nil, err
	}
	return infos(files, cwdFilter), nil
}

// ListAll returns the sessions of every directory under sessionsRoot
// (<agentDir>/sessions), newest first.
func ListAll(sessionsRoot string) ([]Info, error) {
	des, err := os.ReadDir(sessionsRoot)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var files []string
	for _, de := range des {
		p := filepath.Join(sessionsRoot, de.Name())
		if !de.IsDir() {
			if de.Type()&os.ModeSymlink == 0 {
				continue
			}
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
				continue
			}
		}
		fs, err := sessionFiles(p)
		if err != nil {
			continue
		}
		files = append(files, fs...)
	}
	return infos(files, ""), nil
}

// sessionFiles returns the paths of the .jsonl files in dir, in the
// directory's order (listings sort what they read; MostRecent sorts by
// name first, as it always did, for its ties).
func sessionFiles(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	// filepath.Join(dir, name) without cleaning every path: a directory
	// entry's name holds no separator and is neither "." nor "..", so only
	// dir's part changes.
	prefix := filepath.Join(dir, "x")
	prefix = prefix[:len(prefix)-1]
	files := make([]string, 0, len(des))
	for _, de := range des {
		if name := de.Name(); strings.HasSuffix(name, ".jsonl") && !de.IsDir() {
			files = append(files, prefix+name)
		}
	}
	return files, nil
}

func infos(files []string, cwdFilter string) []Info {
	results := make([]cacheEntry, len(files))
	workers := 2 * runtime.GOMAXPROCS(0)
	if workers > len(files) {
		workers = len(files)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s listScratch
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				results[i] = infoOf(files[i], &s)
			}
		}()
	}
	wg.Wait()
	// Sorted through indices: an Info is large, and moving 2000 of them
	// around cost more than the stats of a warm listing.
	idx := make([]int32, 0, len(files))
	for i := range results {
		if r := &results[i]; r.ok && (cwdFilter == "" || r.info.Cwd == cwdFilter) {
			idx = append(idx, int32(i))
		}
	}
	slices.SortFunc(idx, func(a, b int32) int {
		x, y := &results[a].info, &results[b].info
		if c := y.Modified.Compare(x.Modified); c != 0 {
			return c
		}
		return strings.Compare(y.Path, x.Path)
	})
	out := make([]Info, len(idx))
	for k, i := range idx {
		out[k] = results[i].info
	}
	return out
}

// listScratch is what a listing worker reuses from file to file.
type listScratch struct {
	buf   []byte   // the file read
	texts []string // its texts (aliases of buf)
}

// infoOf returns the (cached) info of one file.
func infoOf(path string, s *listScratch) cacheEntry {
	// A cache hit costs one stat (reading the file would cost four
	// system calls, slow on small VMs with thousands of files); a file
	// not cached yet is read at once.
	listCacheMu.RLock()
	c, hit := listCache[path]
	listCacheMu.RUnlock()
	if hit {
		if size, mtime, ok := statListFile(path); ok && c.size == size && c.mtime == mtime {
			return c
		}
	}
	data, size, modTime, ok, buf := readListFile(path, s.buf)
	s.buf = buf
	if !ok {
		return cacheEntry{}
	}
	mtime := modTime.UnixNano()
	info, ok := scanInfo(path, data, modTime, s)
	info.Memo = new(Memo)
	c = cacheEntry{size: size, mtime: mtime, info: info, ok: ok}
	listCacheMu.Lock()
	listCache[path] = c
	listCacheMu.Unlock()
	return c
}

// growListBuf returns buf with room for a file of size bytes (and one
// more), its length its capacity.
func growListBuf(buf []byte, size int64) []byte {
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+size/4+512)
	}
	return buf[:cap(buf)]
}

func parseISO(ts string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, err == nil
}

// scanInfo reads what a listing needs from a session file without decoding
// its messages. The strings it keeps are copies: data is reused (and so
// is s.texts).
func scanInfo(path string, data []byte, mtime time.Time, s *listScratch) (Info, bool) {
	info := Info{Path: path}
	pos := 0
	var h Header
	found := false
	for pos < len(data) {
		line, next := nextLine(data, pos)
		pos = next
		if len(bytes.TrimSpace(line)) == 0 || !validJSON(line) {
			continue
		}
		var ok bool
		if h, ok = parseHeader(line); !ok {
			return info, false
		}
		found = true
		break
	}
	if !found {
		return info, false
	}
	info.ID, info.Cwd, info.ParentSessionPath = strings.Clone(h.ID), strings.Clone(h.Cwd), strings.Clone(h.ParentSession)
	info.Created, _ = parseISO(h.Timestamp)

	texts := s.texts[:0]
	defer func() { s.texts = texts }()
	var lastActivity int64
	hasActivity := false
	for pos < len(data) {
		line, next := nextLine(data, pos)
		pos = next
		l, ok := scanListLine(line)
		if !ok {
			continue
		}
		switch l.typ {
		case TypeSessionInfo:
			info.Name = strings.Clone(strings.TrimSpace(l.name))
		case TypeMessage:
			info.MessageCount++
			if l.role != ai.RoleUser && l.role != ai.RoleAssistant || !l.hasContent {
				continue
			}
			if n, ok := fastFloat(l.mts); ok {
				if !hasActivity || int64(n) > lastActivity {
					lastActivity = int64(n)
				}
				hasActivity = true
			} else if s, ok := str(l.ets); ok {
				if t, ok := parseISO(s); ok {
					if !hasActivity || t.UnixMilli() > lastActivity {
						lastActivity = t.UnixMilli()
					}
					hasActivity = true
				}
			}
			if l.text == "" {
				continue
			}
			texts = append(texts, l.text)
			if info.FirstMessage == "" && l.role == ai.RoleUser {
				info.FirstMessage = strings.Clone(l.text)
			}
		}
	}
	if info.FirstMessage == "" {
		info.FirstMessage = "(no messages)"
	}
	switch len(texts) {
	case 0:
	case 1:
		// strings.Join would return the text itself, which aliases data.
		if texts[0] == info.FirstMessage {
			info.AllMessagesText = info.FirstMessage
		} else {
			info.AllMessagesText = strings.Clone(texts[0])
		}
	default:
		info.AllMessagesText = strings.Join(texts, " ")
	}
	switch {
	case hasActivity:
		info.Modified = time.UnixMilli(lastActivity)
	case !info.Created.IsZero():
		info.Modified = info.Created
	default:
		info.Modified = mtime
	}
	return info, true
}

// The keys of session lines in the order pi writes them, so that
// knownKey finds most of them with a few word compares (any other key is
// scanned as before; the order is a guess, never a requirement).
var (
	listEntryKeys      = newKeySet([]string{"type", "id", "parentId", "timestamp", "message"})
	listUserKeys       = newKeySet([]string{"role", "content", "timestamp"})
	listAssistantKeys  = newKeySet([]string{"role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId"})
	listToolResultKeys = newKeySet([]string{"role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"})
	listBlockKeys      = newKeySet([]string{"type", "text", "thinking", "thinkingSignature", "id", "name", "arguments"})
)

type listLine struct {
	typ, name, role, text string
	ets, mts              []byte
	hasContent            bool
}

// scanListLine validates one line and picks what a listing needs, in one
// pass. Strings alias line.
func scanListLine(line []byte) (listLine, bool) {
	var l listLine
	c := &cur{b: line}
	if !c.open('{') {
		return l, false
	}
	first := true
	at := 0
	for !c.bad && c.next('}', &first) {
		switch k := c.knownKey(listEntryKeys, &at); {
		case c.bad:
		case k == "type":
			l.typ = c.str()
		case k == "name":
			v := c.raw()
			l.name, _ = str(v)
		case k == "timestamp":
			l.ets = c.raw()
		case k == "message" && l.typ == TypeMessage:
			scanListMessage(c, &l)
		default:
			c.raw()
		}
	}
	if c.bad || skipWS(line, c.i) != len(line) {
		return l, false
	}
	return l, true
}

func scanListMessage(c *cur, l *listLine) {
	c.ws()
	if c.i >= len(c.b) || c.b[c.i] != '{' {
		c.raw()
		return
	}
	c.i++
	first := true
	ks, at := listUserKeys, 0
	for !c.bad && c.next('}', &first) {
		switch k := c.knownKey(ks, &at); {
		case c.bad:
		case k == "role":
			v := c.raw()
			l.role, _ = str(v)
			switch l.role {
			case ai.RoleAssistant:
				ks = listAssistantKeys
			case ai.RoleToolResult:
				ks = listToolResultKeys
			}
		case k == "timestamp":
			l.mts = c.raw()
		case k == "content" && (l.role == "" || l.role == ai.RoleUser || l.role == ai.RoleAssistant):
			l.hasContent = true
			l.text = scanContentText(c)
		default:
			c.raw()
		}
	}
}

// scanContentText is pi's extractTextContent: a string content, or the
// text blocks joined by spaces.
func scanContentText(c *cur) string {
	c.ws()
	if c.i < len(c.b) && c.b[c.i] == '"' {
		return c.str()
	}
	if c.i >= len(c.b) || c.b[c.i] != '[' {
		c.raw()
		return ""
	}
	c.i++
	var parts []string
	first := true
	for !c.bad && c.next(']', &first) {
		c.ws()
		if c.i >= len(c.b) || c.b[c.i] != '{' {
			c.raw()
			continue
		}
		c.i++
		bfirst := true
		isText := false
		text := ""
		at := 0
		for !c.bad && c.next('}', &bfirst) {
			switch k := c.knownKey(listBlockKeys, &at); {
			case c.bad:
			case k == "type":
				v := c.raw()
				isText = string(v) == `"text"`
			case k == "text":
				text = strOrSkip(c)
			default:
				c.raw()
			}
		}
		if isText {
			parts = append(parts, text)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, " ")
}

// strOrSkip is str(c.raw()) reading a string once: a string value is
// validated and decoded in one pass (an alias of c.b when it is plain),
// anything else is skipped (validated) and reads as "".
func strOrSkip(c *cur) string {
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		c.raw()
		return ""
	}
	s := c.i
	e, plain := scanString(c.b, s)
	if e < 0 {
		c.bad = true
		return ""
	}
	c.i = e
	if plain {
		return alias(c.b[s+1 : e-1])
	}
	v, _ := unquote(c.b[s:e])
	return v
}

// MostRecent returns the newest valid session file in dir by mtime ("" if
// there is none), for -c/--continue.
func MostRecent(dir string) (string, error) { return MostRecentFor(dir, "") }

// MostRecentFor is MostRecent keeping only sessions whose header cwd is
// cwdFilter (when not ""), for a custom --session-dir shared by projects.
func MostRecentFor(dir, cwdFilter string) (string, error) {
	files, err := sessionFiles(dir)
	if err != nil {
		return "", err
	}
	slices.Sort(files) // os.ReadDir's order, for mtime ties
	type fm struct {
		path  string
		mtime time.Time
	}
	var fms []fm
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			fms = append(fms, fm{p, fi.ModTime()})
		}
	}
	sort.SliceStable(fms, func(a, b int) bool { return fms[a].mtime.After(fms[b].mtime) })
	for _, f := range fms {
		if h, ok := ReadHeader(f.path); ok && (cwdFilter == "" || h.Cwd == cwdFilter) {
			return f.path, nil
		}
	}
	return "", nil
}

// ReadHeader reads the header of a session file (the first valid line,
// looking at most 1 MiB into the file).
func ReadHeader(path string) (Header, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, false
	}
	defer f.Close()
	data := make([]byte, 0, 64<<10)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		pos := 0
		for {
			i := bytes.IndexByte(data[pos:], '\n')
			complete := i >= 0
			var line []byte
			if complete {
				line = data[pos : pos+i]
			} else if err != nil {
				line = data[pos:]
			} else {
				break
			}
			if len(bytes.TrimSpace(line)) > 0 && validJSON(line) {
				h, ok := parseHeader(append([]byte(nil), line...))
				return h, ok
			}
			if !complete {
				return Header{}, false
			}
			pos += i + 1
		}
		if err != nil || len(data) >= 1<<20 {
			return Header{}, false
		}
		if len(data) == cap(data) {
			data = append(data, make([]byte, len(data))...)[:len(data)]
		}
	}
}

// Resolve finds the session named by --session: a path (anything with a
// path separator or ending in .jsonl, relative to cwd), or a session id
// prefix looked up first in the local session directory (sessionDir, or
// DirFor(agentDir, cwd) when "") and then in all sessions.
func Resolve(agentDir, cwd, sessionDir, arg string) (string, error) {
	p, _, err := ResolveWhere(agentDir, cwd, sessionDir, arg)
	return p, err
}

// ResolveWhere is Resolve that also says whether the session was found
// outside the local directory (pi then offers to fork it).
func ResolveWhere(agentDir, cwd, sessionDir, arg string) (path string, foreign bool, err error) {
	if arg == "" {
		return "", false, errors.New("session: empty --session argument")
	}
	if strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".jsonl") {
		if !filepath.IsAbs(arg) {
			arg = filepath.Join(cwd, arg)
		}
		return filepath.Clean(arg), false, nil
	}
	local := sessionDir
	filter := ""
	if local == "" {
		local = DirFor(agentDir, cwd)
	}
	if l, err := List(local, filter); err == nil {
		if p := matchID(l, arg); p != "" {
			return p, false, nil
		}
	}
	all, err := ListAll(filepath.Join(agentDir, "sessions"))
	if err != nil {
		return "", false, err
	}
	if p := matchID(all, arg); p != "" {
		return p, true, nil
	}
	return "", false, fmt.Errorf("No session found matching '%s'", arg)
}

func matchID(infos []Info, prefix string) string {
	for _, i := range infos {
		if i.ID == prefix {
			return i.Path
		}
	}
	for _, i := range infos {
		if strings.HasPrefix(i.ID, prefix) {
			return i.Path
		}
	}
	return ""
}
