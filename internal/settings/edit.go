package settings

// In-place editing of settings files: Set changes the bytes of one value (or
// inserts or removes one member) and leaves every other byte of the file as
// it was, so comments, blank lines, key order, dotted top-level keys and the
// author's layout survive.

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
)

// jnode is one JSON value of a settings file, located by byte offsets into
// the original text (comments included).
type jnode struct {
	kind       byte // '{', '[', or 0 for a scalar
	start, end int  // text[start:end] is the value
	members    []*jmember
	owner      *jmember // the member whose value this is; nil for the root and array elements
}

// jmember is one "key": value member of an object.
type jmember struct {
	key              string
	keyStart, keyEnd int // the quoted key
	value            *jnode
	comma            int // offset of the comma after the value, -1 if none
}

// jparser builds the jnode tree of a text parseObject has accepted.
type jparser struct {
	b []byte
	i int
}

var errTree = errors.New("settings: unexpected JSON structure")

// parseTree returns the top-level value of data, nil when data holds only
// whitespace and comments.
func parseTree(data []byte) (*jnode, error) {
	p := &jparser{b: data}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		p.i = 3
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i == len(data) {
		return nil, nil
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i != len(data) || n.kind != '{' {
		return nil, errTree
	}
	return n, nil
}

// skip passes whitespace and comments.
func (p *jparser) skip() error {
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case isSpace(c):
			p.i++
		case c == '/' && p.i+1 < len(p.b) && p.b[p.i+1] == '/':
			for p.i < len(p.b) && p.b[p.i] != '\n' {
				p.i++
			}
		case c == '/' && p.i+1 < len(p.b) && p.b[p.i+1] == '*':
			end := bytes.Index(p.b[p.i+2:], []byte("*/"))
			if end < 0 {
				return errTree
			}
			p.i += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *jparser) str() error {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return errTree
	}
	for p.i++; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			p.i++
		case '"':
			p.i++
			return nil
		}
	}
	return errTree
}

func (p *jparser) value() (*jnode, error) {
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i >= len(p.b) {
		return nil, errTree
	}
	n := &jnode{start: p.i}
	switch p.b[p.i] {
	case '{':
		n.kind = '{'
		p.i++
		for {
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i >= len(p.b) {
				return nil, errTree
			}
			if p.b[p.i] == '}' {
				p.i++
				n.end = p.i
				return n, nil
			}
			if k := len(n.members); k > 0 && n.members[k-1].comma < 0 {
				return nil, errTree
			}
			m := &jmember{keyStart: p.i, comma: -1}
			if err := p.str(); err != nil {
				return nil, err
			}
			m.keyEnd = p.i
			if err := json.Unmarshal(p.b[m.keyStart:m.keyEnd], &m.key); err != nil {
				return nil, errTree
			}
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, errTree
			}
			p.i++
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			v.owner = m
			m.value = v
			n.members = append(n.members, m)
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i < len(p.b) && p.b[p.i] == ',' {
				m.comma = p.i
				p.i++
			}
		}
	case '[':
		n.kind = '['
		p.i++
		needComma := false
		for {
			if err := p.skip(); err != nil {
				return nil, err
			}
			if p.i >= len(p.b) {
				return nil, errTree
			}
			if p.b[p.i] == ']' {
				p.i++
				n.end = p.i
				return n, nil
			}
			if needComma {
				return nil, errTree
			}
			if _, err := p.value(); err != nil {
				return nil, err
			}
			if err := p.skip(); err != nil {
				return nil, err
			}
			needComma = true
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				needComma = false
			}
		}
	case '"':
		if err := p.str(); err != nil {
			return nil, err
		}
	default:
		for p.i < len(p.b) {
			c := p.b[p.i]
			if isSpace(c) || c == ',' || c == ']' || c == '}' || c == '/' {
				break
			}
			p.i++
		}
		if p.i == n.start {
			return nil, errTree
		}
	}
	n.end = p.i
	return n, nil
}

// findMember returns the member whose key starts at keyStart and the object
// holding it.
func findMember(n *jnode, keyStart int) (*jnode, int) {
	if n == nil || n.kind != '{' || keyStart < n.start || keyStart >= n.end {
		return nil, -1
	}
	for i, m := range n.members {
		if m.keyStart == keyStart {
			return n, i
		}
		if o, j := findMember(m.value, keyStart); o != nil {
			return o, j
		}
	}
	return nil, -1
}

func lastMember(o *jnode, key string) *jmember {
	for i := len(o.members) - 1; i >= 0; i-- {
		if o.members[i].key == key {
			return o.members[i]
		}
	}
	return nil
}

// topKeyPath is the path a top-level key stands for: its dotted parts, or
// nil for a key reading keeps literally ("a..b").
func topKeyPath(key string) []string {
	if !strings.Contains(key, ".") {
		return []string{key}
	}
	parts := strings.Split(key, ".")
	if !validPath(parts) {
		return nil
	}
	return parts
}

func hasPrefix(path, prefix []string) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// Resolving a path the way reading does.
//
// Reading (expandDotted) applies the top-level members in a fixed order —
// plain keys first, then dotted keys in sorted order, the last occurrence of
// a repeated key only — deep-merging each into the result: objects merge key
// by key, anything else replaces. resolve replays that along one path and
// reports, for every prefix of the path, where its value comes from.

// contrib is what one top-level member contributes at some depth: a value of
// the text, or the object its dotted key implies ({key: child}).
type contrib struct {
	text  *jnode
	key   string
	child *contrib
}

func (c *contrib) isObject() bool { return c.text == nil || c.text.kind == '{' }

func (c *contrib) at(key string) *contrib {
	if c.text == nil {
		if c.key == key {
			return c.child
		}
		return nil
	}
	if c.text.kind != '{' {
		return nil
	}
	if m := lastMember(c.text, key); m != nil {
		return &contrib{text: m.value}
	}
	return nil
}

// slot is the resolved value at one prefix of the path.
type slot struct {
	kind  byte     // 0 absent, '{' object, 'v' anything else
	objs  []*jnode // objects of the text merged into it, in reading order
	synth bool     // dotted keys below it contribute too
	node  *jnode   // the value of the text when kind is 'v'
}

func resolve(root *jnode, path []string) []slot {
	st := make([]slot, len(path)+1)
	st[0] = slot{kind: '{', objs: []*jnode{root}}
	var fill, apply func(d int, c *contrib)
	fill = func(d int, c *contrib) {
		if !c.isObject() {
			st[d] = slot{kind: 'v', node: c.text}
			return
		}
		st[d] = slot{kind: '{'}
		if c.text != nil {
			st[d].objs = []*jnode{c.text}
		} else {
			st[d].synth = true
		}
		if d < len(path) {
			if ch := c.at(path[d]); ch != nil {
				fill(d+1, ch)
			}
		}
	}
	apply = func(d int, c *contrib) {
		if c.isObject() && st[d].kind == '{' {
			if c.text != nil {
				st[d].objs = append(st[d].objs, c.text)
			} else {
				st[d].synth = true
			}
			if d < len(path) {
				if ch := c.at(path[d]); ch != nil {
					apply(d+1, ch)
				}
			}
			return
		}
		for j := d; j < len(st); j++ {
			st[j] = slot{}
		}
		fill(d, c)
	}
	plain := map[string]*jmember{}
	dotted := map[string]*jmember{}
	for _, m := range root.members {
		if strings.Contains(m.key, ".") {
			dotted[m.key] = m
		} else {
			plain[m.key] = m
		}
	}
	var order []*jmember
	if m, ok := plain[path[0]]; ok {
		order = append(order, m)
	}
	keys := make([]string, 0, len(dotted))
	for k := range dotted {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		order = append(order, dotted[k])
	}
	for _, m := range order {
		parts := topKeyPath(m.key)
		if parts == nil || parts[0] != path[0] {
			continue
		}
		c := &contrib{text: m.value}
		for i := len(parts) - 1; i >= 0; i-- {
			c = &contrib{key: parts[i], child: c}
		}
		apply(0, c)
	}
	return st
}

// definers returns the keyStart of every member of the text that stands for
// exactly path q (a nested member, a dotted top-level key, repeated keys
// included), and of every top-level dotted key that lies below q.
func definers(root *jnode, q []string) (defs []*jmember, below []*jmember) {
	var walk func(m *jmember, rest []string)
	walk = func(m *jmember, rest []string) {
		if len(rest) == 0 {
			defs = append(defs, m)
			return
		}
		if m.value.kind != '{' {
			return
		}
		for _, c := range m.value.members {
			if c.key == rest[0] {
				walk(c, rest[1:])
			}
		}
	}
	for _, m := range root.members {
		parts := topKeyPath(m.key)
		switch {
		case parts == nil:
		case len(parts) > len(q):
			if hasPrefix(parts, q) {
				below = append(below, m)
			}
		case hasPrefix(q, parts):
			walk(m, q[len(parts):])
		}
	}
	return defs, below
}

// Layout helpers.

type style struct {
	nl   string // "\n" or "\r\n"
	unit string // one level of indentation
}

func detectStyle(b []byte, root *jnode) style {
	st := style{nl: "\n", unit: "  "}
	if bytes.Contains(b, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	var find func(o *jnode) bool
	find = func(o *jnode) bool {
		for _, m := range o.members {
			at := o.start
			if o.owner != nil {
				at = o.owner.keyStart
			}
			if firstOnLine(b, m.keyStart) && firstOnLine(b, at) {
				ind, par := indentAt(b, m.keyStart), indentAt(b, at)
				if len(ind) > len(par) && strings.HasPrefix(ind, par) {
					st.unit = ind[len(par):]
					return true
				}
			}
			if m.value.kind == '{' && find(m.value) {
				return true
			}
		}
		return false
	}
	find(root)
	return st
}

func lineStart(b []byte, i int) int {
	for i > 0 && b[i-1] != '\n' {
		i--
	}
	return i
}

func indentAt(b []byte, i int) string {
	s := lineStart(b, i)
	j := s
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	return string(b[s:j])
}

// firstOnLine reports whether only blanks precede offset i on its line (a
// byte order mark at the start of the file counts as blank).
func firstOnLine(b []byte, i int) bool {
	s := lineStart(b, i)
	if s == 0 && bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) && i >= 3 {
		s = 3
	}
	for _, c := range b[s:i] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// restOfLine passes blanks and comments that end on the line of offset i.
// It returns where it stopped and whether the line ends there.
func restOfLine(b []byte, i int) (int, bool) {
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i+1 < len(b) && b[i] == '/' && b[i+1] == '/' {
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) && i > 0 && b[i-1] == '\r' {
				i--
			}
			return i, true
		}
		if i+1 < len(b) && b[i] == '/' && b[i+1] == '*' {
			e := bytes.Index(b[i+2:], []byte("*/"))
			if e < 0 || bytes.IndexByte(b[i:i+2+e], '\n') >= 0 {
				return i, false
			}
			i += 2 + e + 2
			continue
		}
		break
	}
	return i, i == len(b) || b[i] == '\n' || (b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n')
}

// afterNewline returns the offset after the line break at i (or i at the end).
func afterNewline(b []byte, i int) int {
	switch {
	case i < len(b) && b[i] == '\n':
		return i + 1
	case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
		return i + 2
	}
	return i
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// encodeJSON writes v as the settings writer does (no HTML escaping), on one
// line when compact, else indented with prefix before every line but the
// first.
func encodeJSON(v any, prefix string, st style, compact bool) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if !compact {
		enc.SetIndent(prefix, st.unit)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	if st.nl != "\n" {
		s = strings.ReplaceAll(s, "\n", st.nl)
	}
	return s, nil
}

// inlineContext reports whether node n sits in a member that shares its line
// with other content before it, such as {"a": 1, "b": {...}} on one line;
// values written there are kept on one line.
func inlineContext(b []byte, n *jnode) bool {
	if n.owner == nil {
		return !firstOnLine(b, n.start)
	}
	return !firstOnLine(b, n.owner.keyStart)
}

func splice(b []byte, start, end int, s string) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(s))
	out = append(out, b[:start]...)
	out = append(out, s...)
	return append(out, b[end:]...)
}

func nest(path []string, v any) any {
	for i := len(path) - 1; i >= 0; i-- {
		v = map[string]any{path[i]: v}
	}
	return v
}

// replaceValue writes v over the bytes of node n.
func replaceValue(b []byte, n *jnode, v any, st style) ([]byte, error) {
	prefix := indentAt(b, n.start)
	if n.owner != nil {
		prefix = indentAt(b, n.owner.keyStart)
	}
	s, err := encodeJSON(v, prefix, st, inlineContext(b, n))
	if err != nil {
		return nil, err
	}
	return splice(b, n.start, n.end, s), nil
}

// insertMember adds "key": v at the end of object o.
func insertMember(b []byte, o *jnode, key string, v any, st style) ([]byte, error) {
	k, err := encodeJSON(key, "", st, true)
	if err != nil {
		return nil, err
	}
	inline := inlineContext(b, o)
	if len(o.members) == 0 {
		parent := indentAt(b, o.start)
		if o.owner != nil {
			parent = indentAt(b, o.owner.keyStart)
		}
		ind := parent + st.unit
		val, err := encodeJSON(v, ind, st, inline)
		if err != nil {
			return nil, err
		}
		inner := b[o.start+1 : o.end-1]
		if isBlank(inner) {
			if inline {
				return splice(b, o.start+1, o.end-1, k+": "+val), nil
			}
			return splice(b, o.start+1, o.end-1, st.nl+ind+k+": "+val+st.nl+parent), nil
		}
		// Only comments inside: the member goes after the last of them.
		at := o.start + 1
		for i := at; i < o.end-1; {
			switch {
			case isSpace(b[i]):
				i++
				continue
			case b[i] == '/' && b[i+1] == '/':
				j := bytes.IndexByte(b[i:o.end-1], '\n')
				if j < 0 {
					return nil, errTree
				}
				i += j
				at = i
				if b[at-1] == '\r' {
					at--
				}
			case b[i] == '/' && b[i+1] == '*':
				j := bytes.Index(b[i+2:o.end-1], []byte("*/"))
				if j < 0 {
					return nil, errTree
				}
				i += 2 + j + 2
				at = i
			default:
				return nil, errTree
			}
		}
		ins := st.nl + ind + k + ": " + val
		if bytes.IndexByte(b[at:o.end-1], '\n') >= 0 {
			return splice(b, at, at, ins), nil
		}
		return splice(b, at, o.end-1, ins+st.nl+parent), nil
	}
	last := o.members[len(o.members)-1]
	sep := string(b[last.keyEnd:last.value.start])
	if strings.ContainsAny(sep, "/\n") {
		sep = ": "
	}
	if inline || !firstOnLine(b, last.keyStart) {
		val, err := encodeJSON(v, "", st, true)
		if err != nil {
			return nil, err
		}
		if last.comma >= 0 {
			return splice(b, last.comma+1, last.comma+1, " "+k+sep+val+","), nil
		}
		return splice(b, last.value.end, last.value.end, ", "+k+sep+val), nil
	}
	ind := indentAt(b, last.keyStart)
	val, err := encodeJSON(v, ind, st, false)
	if err != nil {
		return nil, err
	}
	ins := st.nl + ind + k + sep + val
	after := last.value.end
	if last.comma >= 0 {
		after = last.comma + 1
		ins += "," // the file ends members with commas; so does the new one
	}
	p, _ := restOfLine(b, after)
	out := make([]byte, 0, len(b)+len(ins)+1)
	out = append(out, b[:last.value.end]...)
	if last.comma < 0 {
		out = append(out, ',')
	}
	out = append(out, b[last.value.end:p]...)
	out = append(out, ins...)
	return append(out, b[p:]...), nil
}

type edit struct {
	start, end int
	s          string
}

// removeMember deletes member idx of object o with its comma, and with its
// line when it has the line to itself (a comment after it on that line goes
// too; comments on lines of their own stay).
func removeMember(b []byte, o *jnode, idx int) []byte {
	m := o.members[idx]
	last := idx == len(o.members)-1
	start, end := m.keyStart, m.value.end
	if m.comma >= 0 {
		end = m.comma + 1
	}
	var edits []edit
	if last && m.comma < 0 && idx > 0 {
		// Without a trailing-comma style, the comma before goes too.
		prev := o.members[idx-1]
		edits = append(edits, edit{prev.comma, prev.comma + 1, ""})
	}
	if p, eol := restOfLine(b, end); eol && firstOnLine(b, start) {
		start, end = lineStart(b, start), afterNewline(b, p)
	} else if !last {
		for end < len(b) && (b[end] == ' ' || b[end] == '\t') {
			end++
		}
	} else if len(edits) == 1 {
		j := start
		for j > edits[0].end && isSpace(b[j-1]) {
			j--
		}
		if j == edits[0].end {
			start, edits = edits[0].start, nil
		}
	}
	edits = append(edits, edit{start, end, ""})
	if len(o.members) == 1 {
		inner := append(bytes.Clone(b[o.start+1:start]), b[end:o.end-1]...)
		if isBlank(inner) {
			edits = []edit{{o.start + 1, o.end - 1, ""}}
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	for _, e := range edits {
		b = splice(b, e.start, e.end, e.s)
	}
	return b
}

// removeAll removes the members starting at the given offsets, last first,
// parsing again after each removal. Earlier offsets stay valid: a removal
// only changes the file from the removed member's line (or the comma just
// before it) on.
func removeAll(b []byte, keyStarts []int) ([]byte, error) {
	sort.Sort(sort.Reverse(sort.IntSlice(keyStarts)))
	for _, ks := range keyStarts {
		root, err := parseTree(b)
		if err != nil || root == nil {
			return nil, errTree
		}
		o, i := findMember(root, ks)
		if o == nil {
			return nil, errTree
		}
		b = removeMember(b, o, i)
	}
	return b, nil
}

func keyStarts(ms ...[]*jmember) []int {
	var out []int
	for _, l := range ms {
		for _, m := range l {
			out = append(out, m.keyStart)
		}
	}
	return out
}

// setText returns data with value v stored at path. When exclusive, every
// other member of the text that also stands for the changed path (a
// shadowed duplicate, a nested member behind a dotted key, dotted keys
// below it) is removed first, so that nothing merges into the new value.
func setText(data []byte, path []string, v any, exclusive bool) ([]byte, error) {
	root, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	st := detectStyle(data, root)
	slots := resolve(root, path)
	k := len(path)
	for j := 1; j <= k; j++ {
		s := slots[j]
		if s.kind == '{' && j < k {
			continue
		}
		q := path[:j]
		if exclusive {
			var keep *jnode
			switch {
			case s.kind == 'v':
				keep = s.node
			case s.kind == '{' && len(s.objs) > 0:
				keep = s.objs[len(s.objs)-1]
			}
			defs, below := definers(root, q)
			var drop []*jmember
			for _, m := range defs {
				if m.value != keep {
					drop = append(drop, m)
				}
			}
			if len(drop)+len(below) > 0 {
				out, err := removeAll(data, keyStarts(drop, below))
				if err != nil {
					return nil, err
				}
				return setText(out, path, v, false)
			}
		}
		switch {
		case s.kind == 'v': // a value that is not an object: replace it
			return replaceValue(data, s.node, nest(path[j:], v), st)
		case s.kind == '{' && len(s.objs) > 0: // the path itself, an object
			return replaceValue(data, s.objs[len(s.objs)-1], v, st)
		case s.kind == '{' || len(slots[j-1].objs) == 0:
			// Only dotted keys make up the object: add another one.
			return insertMember(data, root, strings.Join(path, "."), v, st)
		default: // absent: add it to the innermost object of the text
			objs := slots[j-1].objs
			return insertMember(data, objs[len(objs)-1], path[j-1], nest(path[j:], v), st)
		}
	}
	return nil, errTree
}

// removeText returns data without any member standing for path (including
// shadowed ones, which would otherwise resurface, and dotted keys below it).
func removeText(data []byte, path []string) ([]byte, error) {
	root, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	defs, below := definers(root, path)
	return removeAll(data, keyStarts(defs, below))
}

// editText returns data with path set to v (removed when remove), changing
// only the bytes that must change, or ok=false when no such edit produced
// exactly want (the expanded tree the change should give); the caller then
// rewrites the file from want.
func editText(data []byte, path []string, v any, remove bool, want map[string]any) (out []byte, got map[string]any, ok bool) {
	check := func(out []byte, err error) (map[string]any, bool) {
		if err != nil {
			return nil, false
		}
		obj, err := parseObject(out)
		if err != nil {
			return nil, false
		}
		got := expandDotted(obj)
		return got, sameSettings(got, want, path, remove)
	}
	if isBlank(stripComments(data)) {
		if remove {
			return data, want, true
		}
		full, err := encodeFile(want)
		if err != nil {
			return nil, nil, false
		}
		if len(data) > 0 && !isBlank(data) {
			// Only comments: keep them above the new object.
			nl := "\n"
			if bytes.Contains(data, []byte("\r\n")) {
				nl = "\r\n"
				full = bytes.ReplaceAll(full, []byte("\n"), []byte("\r\n"))
			}
			head := bytes.TrimRight(data, " \t\r\n")
			full = append(append(bytes.Clone(head), nl...), full...)
		}
		got, ok := check(full, nil)
		return full, got, ok
	}
	if remove {
		out, err := removeText(data, path)
		got, ok := check(out, err)
		return out, got, ok
	}
	for _, exclusive := range []bool{false, true} {
		out, err := setText(data, path, v, exclusive)
		if got, ok := check(out, err); ok {
			return out, got, true
		}
	}
	return nil, nil, false
}

func stripComments(data []byte) []byte {
	clean, err := standardize(data)
	if err != nil {
		return data
	}
	return clean
}

// sameSettings reports whether got is want. After a removal, objects along
// the path that are left empty may be missing from got: when the removed
// key was the only thing a dotted key ("a.b.c": 1) put there, the whole
// member goes and leaves no empty "a" or "a.b" behind.
func sameSettings(got, want map[string]any, path []string, remove bool) bool {
	if remove {
		got = pruneEmpty(got, path)
		want = pruneEmpty(want, path)
	}
	return reflect.DeepEqual(got, want)
}

// pruneEmpty returns a copy of m without the empty objects along path,
// innermost first.
func pruneEmpty(m map[string]any, path []string) map[string]any {
	m = deepCopy(m).(map[string]any)
	for d := len(path) - 1; d >= 1; d-- {
		parent, ok := lookup(m, strings.Join(path[:d-1], "."))
		if d == 1 {
			parent, ok = m, true
		}
		pm, isMap := parent.(map[string]any)
		if !ok || !isMap {
			continue
		}
		if child, isMap := pm[path[d-1]].(map[string]any); isMap && len(child) == 0 {
			delete(pm, path[d-1])
		} else {
			break
		}
	}
	return m
}
