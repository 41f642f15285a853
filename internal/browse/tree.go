// Package browse builds the session browsing answers of the RPC surface:
// the get_session_tree projections (the plain view of every entry, and the
// "browse" view proposed in pi PR #1762), pi's raw get_tree in nested and flat forms, and the
// list_sessions listing. Everything here is pure: it reads a session or
// listing and returns JSON-ready values, and every traversal and JSON writer
// is iterative, so a session of any depth is answered without recursion.
package browse

import (
	"encoding/json"
	"io"
	"os"
	"strconv"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
)

// Views of SessionTree.
const (
	ViewDefault = ""       // the plain view: every entry, 140-character previews
	ViewBrowse  = "browse" // pi PR #1762's projection
)

// TreeOptions select the shape of SessionTree.
type TreeOptions struct {
	View string // ViewDefault or ViewBrowse
	Flat bool   // one depth-first list, each node without children
	// Home is the directory shortened to ~ in formatted tool calls (browse
	// view); "" means DefaultHome().
	Home string
}

// TreeEntry is one node's entry. The plain view's fields come first (id,
// parentId, type, timestamp, label?, preview?); in the browse view the
// fields of pi PR #1762 follow (inlined from *BrowseFields).
type TreeEntry struct {
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Type      string  `json:"type"`
	Timestamp string  `json:"timestamp"`
	Label     string  `json:"label,omitempty"`
	Preview   *string `json:"preview,omitempty"`
	*BrowseFields

	previewStore string // what Preview points to
}

func (e *TreeEntry) setPreview(p string) {
	e.previewStore = p
	e.Preview = &e.previewStore
}

// BrowseFields are PR #1762's per-type fields, each set where its entry
// type has it.
type BrowseFields struct {
	Role              string          `json:"role,omitempty"`    // message
	RawRole           string          `json:"rawRole,omitempty"` // message with role "unknown"
	StopReason        string          `json:"stopReason,omitempty"`
	ErrorMessage      string          `json:"errorMessage,omitempty"`
	ToolName          string          `json:"toolName,omitempty"`          // tool_result
	ToolArgs          json.RawMessage `json:"toolArgs,omitempty"`          // tool_result
	FormattedToolCall *string         `json:"formattedToolCall,omitempty"` // tool_result
	TokensBefore      *int64          `json:"tokensBefore,omitempty"`      // compaction
	Provider          *string         `json:"provider,omitempty"`          // model_change
	ModelID           *string         `json:"modelId,omitempty"`           // model_change
	ThinkingLevel     *string         `json:"thinkingLevel,omitempty"`     // thinking_level_change
	Summary           *string         `json:"summary,omitempty"`           // branch_summary
	CustomType        *string         `json:"customType,omitempty"`        // custom_message

	// what the pointers point to
	formattedStore string
	tokensStore    int64
	strStore       [2]string
}

// TreeNode is a node of the nested form.
type TreeNode struct {
	Entry    *TreeEntry  `json:"entry"`
	Children []*TreeNode `json:"children"`
}

// FlatNode is a node of the flat form: no children member; the tree is
// rebuilt from entry.parentId.
type FlatNode struct {
	Entry *TreeEntry `json:"entry"`
}

// TreeResult is the answer of get_session_tree: {leafId, nodes}. Nodes holds
// the roots of the nested form; in the flat form (IsFlat) Flat holds every
// node depth-first instead. Encode it with MarshalJSON or AppendJSON, which
// are iterative.
type TreeResult struct {
	LeafID *string     `json:"leafId"`
	Nodes  []*TreeNode `json:"nodes"`
	Flat   []FlatNode  `json:"-"`

	flat    bool        // Flat is the answer even when empty
	sizeEst int         // estimated JSON size
	ents    []TreeEntry // slab behind the entries
	kids    []*TreeNode // slab behind the children slices
	nodes   []TreeNode  // slab behind the nodes
}

// SizeHint is about the length of the result's JSON.
func (t *TreeResult) SizeHint() int { return t.sizeEst }

// IsFlat reports whether the result is in the flat form.
func (t *TreeResult) IsFlat() bool { return t.flat }

// SessionTree builds get_session_tree's answer for s.
func SessionTree(s *session.Session, opts TreeOptions) TreeResult {
	f := newForest(s)
	if opts.View == ViewBrowse {
		home := opts.Home
		if home == "" {
			home = DefaultHome()
		}
		return browseTree(s, f, opts.Flat, home)
	}
	return plainTree(s, f, opts.Flat)
}

// DefaultHome is the directory pi shortens to ~: $HOME, else
// $USERPROFILE.
func DefaultHome() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	return os.Getenv("USERPROFILE")
}

func leafPtr(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// entrySize estimates the JSON size of an entry's envelope fields.
func entrySize(e *TreeEntry) int {
	n := 80 + len(e.ID) + len(e.Type) + len(e.Timestamp) + len(e.Label)
	if e.ParentID != nil {
		n += len(*e.ParentID)
	}
	if e.Preview != nil {
		n += len(*e.Preview) + 12
	}
	return n
}

// plainTree is the plain view: every entry, in getTree order.
func plainTree(s *session.Session, f *forest, flat bool) TreeResult {
	total := len(f.entries)
	res := TreeResult{LeafID: leafPtr(s.LeafID()), flat: flat}
	res.ents = make([]TreeEntry, total)
	var lastTool, lastToolPreview string // "[toolResult:name]" of the last name seen
	var peek session.TextPeek
	// toolName reports a tool result's tool name.
	toolName := func(e *session.Entry) (string, bool) {
		if e.Type != session.TypeMessage || e.Role() != ai.RoleToolResult {
			return "", false
		}
		if e.PeekText(&peek, 0, false) {
			return peek.ToolName, true
		}
		if tr, ok := e.Message().(*ai.ToolResultMessage); ok {
			return tr.ToolName, true
		}
		return "", false
	}
	fill := func(slot int, i int32) *TreeEntry {
		te := &res.ents[slot]
		e := f.entries[i]
		te.ID, te.ParentID, te.Type, te.Timestamp, te.Label = e.ID, e.ParentID, e.Type, e.Timestamp, f.labels[i]
		if name, ok := toolName(e); ok && name == lastTool && lastToolPreview != "" {
			te.setPreview(lastToolPreview)
		} else if p, ok := plainPreview(e, &peek); ok {
			te.setPreview(p)
			if name, isTR := toolName(e); isTR {
				lastTool, lastToolPreview = name, p
			}
		}
		res.sizeEst += entrySize(te)
		return te
	}
	if flat {
		res.Flat = make([]FlatNode, 0, total)
		stack := make([]int32, 0, 64)
		for i := len(f.roots) - 1; i >= 0; i-- {
			stack = append(stack, f.roots[i])
		}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			res.Flat = append(res.Flat, FlatNode{Entry: fill(len(res.Flat), n)})
			c := f.children(n)
			for i := len(c) - 1; i >= 0; i-- {
				stack = append(stack, c[i])
			}
		}
		return res
	}
	res.nodes = make([]TreeNode, total)
	res.kids = make([]*TreeNode, total)
	next := 0  // next free slot of res.nodes / res.ents
	kidAt := 0 // next free slot of res.kids
	alloc := func(i int32) *TreeNode {
		d := &res.nodes[next]
		d.Entry = fill(next, i)
		next++
		return d
	}
	type item struct {
		src int32
		dst *TreeNode
	}
	res.Nodes = make([]*TreeNode, len(f.roots))
	for i, r := range f.roots {
		res.Nodes[i] = alloc(r)
	}
	stack := make([]item, 0, 64)
	for i := len(f.roots) - 1; i >= 0; i-- {
		stack = append(stack, item{f.roots[i], res.Nodes[i]})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := f.children(it.src)
		nc := len(c)
		it.dst.Children = res.kids[kidAt : kidAt+nc : kidAt+nc]
		kidAt += nc
		for i, k := range c {
			it.dst.Children[i] = alloc(k)
		}
		for i := nc - 1; i >= 0; i-- {
			stack = append(stack, item{c[i], it.dst.Children[i]})
		}
	}
	return res
}

// hidden reports whether the browse view leaves an entry out (the
// bookkeeping entries; their children move up to the nearest shown
// ancestor).
func hidden(e *session.Entry) bool {
	switch e.Type {
	case session.TypeLabel, session.TypeSessionInfo, session.TypeCustom:
		return true
	}
	return false
}

// browseTree is PR #1762's projection.
func browseTree(s *session.Session, f *forest, flat bool, home string) TreeResult {
	total := len(f.entries)
	res := TreeResult{flat: flat}
	res.LeafID = resolveLeaf(s)
	res.ents = make([]TreeEntry, total)
	extras := make([]BrowseFields, total)
	shown := 0
	if flat {
		res.Flat = make([]FlatNode, 0, total)
	}
	// Tool calls along the current branch: for each id, a linked stack of
	// the ancestors' calls with that id (the nearest wins, and within one
	// message the last block wins, as successive Map.set calls do).
	type link struct {
		call toolCall
		id   string
		prev int32 // -1: none
	}
	var links []link
	branch := map[string]int32{}
	var global map[string]toolCall // built on first need
	lookup := func(id string) (toolCall, bool) {
		if l, ok := branch[id]; ok {
			return links[l].call, true
		}
		if global == nil {
			global = globalToolCalls(f)
		}
		c, ok := global[id]
		return c, ok
	}

	// parents[k] is the projected parent slot of the k-th shown entry (-1
	// for a root); the nested form's children slices are built from it at
	// the end, in visiting order.
	var parents []int32
	if !flat {
		parents = make([]int32, 0, total)
	}
	// Messages read from a file are seen without being decoded.
	var peek session.TextPeek

	type item struct {
		src      int32   // entry index; -1 for an exit marker
		parent   int32   // projected parent slot (-1 = a root); for an exit marker, the first link it pushed
		parentID *string // projected parent id
	}
	stack := make([]item, 0, 64)
	for i := len(f.roots) - 1; i >= 0; i-- {
		stack = append(stack, item{src: f.roots[i], parent: -1})
	}
	pending := len(stack) // entries (not exit markers) on the stack
	for pending > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.src < 0 {
			// Leaving an assistant with tool calls: they no longer apply.
			for l := len(links) - 1; l >= int(it.parent); l-- {
				if prev := links[l].prev; prev < 0 {
					delete(branch, links[l].id)
				} else {
					branch[links[l].id] = prev
				}
			}
			links = links[:it.parent]
			continue
		}
		pending--
		e := f.entries[it.src]
		c := f.children(it.src)
		if hidden(e) {
			for i := len(c) - 1; i >= 0; i-- {
				stack = append(stack, item{src: c[i], parent: it.parent, parentID: it.parentID})
			}
			pending += len(c)
			continue
		}
		slot := int32(shown)
		shown++
		te := &res.ents[slot]
		te.BrowseFields = &extras[slot]
		te.ID, te.ParentID, te.Type, te.Timestamp, te.Label = e.ID, it.parentID, e.Type, e.Timestamp, f.labels[it.src]
		peeked := e.Type == session.TypeMessage && e.PeekText(&peek, browsePreviewLen, true)
		projectEntry(te, e, home, lookup, &peek, peeked)
		res.sizeEst += entrySize(te) + browseSize(te.BrowseFields)
		if flat {
			res.Flat = append(res.Flat, FlatNode{Entry: te})
		} else {
			parents = append(parents, it.parent)
		}

		// This node's own tool calls apply to its descendants only.
		if len(c) > 0 && e.Role() == ai.RoleAssistant {
			first := int32(len(links))
			toolCalls(e, &peek, peeked, func(id string, call toolCall) {
				prev, ok := branch[id]
				if !ok {
					prev = -1
				}
				links = append(links, link{call, id, prev})
				branch[id] = int32(len(links) - 1)
			})
			if int(first) < len(links) {
				stack = append(stack, item{src: -1, parent: first})
			}
		}
		id := &te.ID
		for i := len(c) - 1; i >= 0; i-- {
			stack = append(stack, item{src: c[i], parent: slot, parentID: id})
		}
		pending += len(c)
	}
	res.ents = res.ents[:shown:shown]
	if flat {
		return res
	}

	// Nested form: nodes and children slices from the parent slots.
	n := len(res.ents)
	res.nodes = make([]TreeNode, n)
	res.kids = make([]*TreeNode, n)
	start := make([]int32, n+1)
	roots := 0
	for _, p := range parents {
		if p < 0 {
			roots++
		} else {
			start[p+1]++
		}
	}
	for i := 1; i <= n; i++ {
		start[i] += start[i-1]
	}
	res.Nodes = make([]*TreeNode, 0, roots)
	fill := append([]int32(nil), start[:n]...)
	for k := range res.nodes {
		node := &res.nodes[k]
		node.Entry = &res.ents[k]
		node.Children = res.kids[start[k]:start[k+1]:start[k+1]]
		if p := parents[k]; p < 0 {
			res.Nodes = append(res.Nodes, node)
		} else {
			res.kids[fill[p]] = node
			fill[p]++
		}
	}
	return res
}

// browseSize estimates the JSON size of the browse fields.
func browseSize(b *BrowseFields) int {
	n := len(b.Role) + len(b.RawRole) + len(b.StopReason) + len(b.ErrorMessage) + len(b.ToolName) + len(b.ToolArgs) + 40
	if b.FormattedToolCall != nil {
		n += len(*b.FormattedToolCall) + 24
	}
	for _, p := range [...]*string{b.Provider, b.ModelID, b.ThinkingLevel, b.Summary, b.CustomType} {
		if p != nil {
			n += len(*p) + 20
		}
	}
	return n
}

// toolCall is what the browse view uses of a toolCall block.
type toolCall struct {
	name string
	args json.RawMessage
}

// toolCalls calls fn with each toolCall block of an assistant message
// entry, peeked (in p) or decoded.
func toolCalls(e *session.Entry, p *session.TextPeek, peeked bool, fn func(id string, c toolCall)) {
	if peeked {
		for _, c := range p.Calls {
			fn(c.ID, toolCall{c.Name, c.Arguments})
		}
		return
	}
	if am, ok := e.Message().(*ai.AssistantMessage); ok {
		for i := range am.Content {
			if b := &am.Content[i]; b.Type == ai.ContentToolCall {
				fn(b.ID, toolCall{b.Name, b.Arguments})
			}
		}
	}
}

// globalToolCalls maps every tool call id to its call over the whole tree,
// later calls in depth-first order winning.
func globalToolCalls(f *forest) map[string]toolCall {
	m := map[string]toolCall{}
	var peek session.TextPeek
	stack := make([]int32, 0, 64)
	for i := len(f.roots) - 1; i >= 0; i-- {
		stack = append(stack, f.roots[i])
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := f.entries[n]
		if e.Role() == ai.RoleAssistant {
			toolCalls(e, &peek, e.PeekText(&peek, 0, false), func(id string, c toolCall) { m[id] = c })
		}
		c := f.children(n)
		for i := len(c) - 1; i >= 0; i-- {
			stack = append(stack, c[i])
		}
	}
	return m
}

// resolveLeaf walks from the raw leaf up the parent chain to the nearest
// entry the browse view shows (nil when there is none).
func resolveLeaf(s *session.Session) *string {
	id := s.LeafID()
	for steps := s.Len() + 1; id != "" && steps > 0; steps-- {
		e := s.Entry(id)
		if e == nil {
			return nil
		}
		if !hidden(e) {
			return &e.ID
		}
		if e.ParentID == nil || *e.ParentID == e.ID {
			return nil
		}
		id = *e.ParentID
	}
	return nil
}

// projectEntry sets the PR #1762 fields of a shown entry.
func projectEntry(te *TreeEntry, e *session.Entry, home string, lookup func(string) (toolCall, bool), p *session.TextPeek, peeked bool) {
	b := te.BrowseFields
	switch e.Type {
	case session.TypeMessage:
		if peeked {
			projectPeek(te, e.Role(), p, home, lookup)
			return
		}
		projectMessage(te, e.Message(), home, lookup)
	case session.TypeCompaction:
		b.tokensStore = e.TokensBefore
		b.TokensBefore = &b.tokensStore
	case session.TypeModelChange:
		b.strStore = [2]string{e.Provider, e.ModelID}
		b.Provider, b.ModelID = &b.strStore[0], &b.strStore[1]
	case session.TypeThinkingLevelChange:
		b.strStore[0] = e.ThinkingLevel
		b.ThinkingLevel = &b.strStore[0]
	case session.TypeBranchSummary:
		b.strStore[0] = e.Summary
		b.Summary = &b.strStore[0]
	case session.TypeCustomMessage:
		b.strStore[0] = e.CustomType
		b.CustomType = &b.strStore[0]
		te.setPreview(normalizePreview(userContentPrefix(e.Content, browsePreviewLen)))
	}
}

// projectPeek is projectMessage of a message read with PeekText.
func projectPeek(te *TreeEntry, role string, p *session.TextPeek, home string, lookup func(string) (toolCall, bool)) {
	switch role {
	case ai.RoleToolResult:
		projectToolResult(te, p.ToolCallID, p.ToolName, home, lookup)
	case ai.RoleAssistant:
		projectAssistant(te, textsPrefix(p.Texts, " ", browsePreviewLen), p.StopReason, p.ErrorMessage)
	case ai.RoleUser:
		te.Role = ai.RoleUser
		text := textsPrefix(p.Texts, " ", browsePreviewLen)
		if p.IsString {
			text = jsSlice(p.Texts[0], browsePreviewLen)
		}
		te.setPreview(normalizePreview(text))
	}
}

func projectToolResult(te *TreeEntry, callID, toolName, home string, lookup func(string) (toolCall, bool)) {
	te.Type = "tool_result"
	var call toolCall
	found := false
	if callID != "" {
		call, found = lookup(callID)
	}
	var preview string
	if found {
		args := parseArgs(call.args)
		f := formatToolCall(call.name, args, home)
		te.ToolName = call.name
		te.ToolArgs = args.raw
		te.formattedStore = f
		te.FormattedToolCall = &te.formattedStore
		preview = f
	} else {
		te.ToolName = toolName
		name := toolName
		if name == "" {
			name = "tool"
		}
		preview = "[" + name + "]"
	}
	te.setPreview(normalizePreview(preview))
}

func projectAssistant(te *TreeEntry, text, stopReason, errorMessage string) {
	te.Role = ai.RoleAssistant
	var p string
	switch {
	case text != "":
		p = normalizePreview(text)
	case stopReason == ai.StopAborted:
		p = "(aborted)"
	case errorMessage != "":
		p = normalizePreview(errorMessage)
	default:
		p = "(no content)"
	}
	te.setPreview(p)
	te.StopReason, te.ErrorMessage = stopReason, errorMessage
}

func projectMessage(te *TreeEntry, m ai.Message, home string, lookup func(string) (toolCall, bool)) {
	switch m := m.(type) {
	case *ai.ToolResultMessage:
		projectToolResult(te, m.ToolCallID, m.ToolName, home, lookup)
		return
	case *ai.BashExecutionMessage:
		te.Role = ai.RoleBashExecution
		te.setPreview(formatBash(m.Command))
		return
	case *ai.AssistantMessage:
		projectAssistant(te, textPrefix(m.Content, " ", browsePreviewLen), m.StopReason, m.ErrorMessage)
		return
	case *ai.UserMessage:
		te.Role = ai.RoleUser
		te.setPreview(normalizePreview(userContentPrefix(m.Content, browsePreviewLen)))
		return
	case *ai.CustomMessage:
		te.Role = ai.RoleCustom
		te.setPreview(normalizePreview(userContentPrefix(m.Content, browsePreviewLen)))
		return
	case *ai.BranchSummaryMessage:
		te.Role = ai.RoleBranchSummary
		te.setPreview("") // no content member
		return
	case *ai.CompactionSummaryMessage:
		te.Role = ai.RoleCompactionSummary
		te.setPreview("")
		return
	case *ai.SystemMessage:
		te.Role, te.RawRole = "unknown", ai.RoleSystem
		te.setPreview(normalizePreview(userContentPrefix(m.Content, browsePreviewLen)))
		return
	case *ai.UnknownMessage:
		te.Role, te.RawRole = "unknown", m.Role
		te.setPreview(normalizePreview(rawContentPrefix(m.Raw, browsePreviewLen)))
		return
	}
	// A message that could not be decoded.
	te.Role = "unknown"
	te.setPreview("")
}

// ---- JSON ----

// MarshalJSON writes {"leafId":…,"nodes":[…]} without recursion.
func (t TreeResult) MarshalJSON() ([]byte, error) {
	return t.AppendJSON(nil), nil
}

// AppendJSON appends the result's JSON to dst.
func (t *TreeResult) AppendJSON(dst []byte) []byte {
	if t.sizeEst > 0 && cap(dst)-len(dst) < t.sizeEst+64 {
		grown := make([]byte, len(dst), len(dst)+t.sizeEst+t.sizeEst/8+64)
		copy(grown, dst)
		dst = grown
	}
	return t.appendJSON(dst, nil)
}

// WriteTo streams the result's JSON to w in chunks, without building it
// whole in memory.
func (t *TreeResult) WriteTo(w io.Writer) (int64, error) {
	cw := chunkWriter{w: w, buf: make([]byte, 0, chunkSize+4096)}
	cw.buf = t.appendJSON(cw.buf, cw.flush)
	cw.buf = cw.flush(cw.buf)
	return cw.n, cw.err
}

func (t *TreeResult) appendJSON(dst []byte, flush func([]byte) []byte) []byte {
	dst = append(dst, `{"leafId":`...)
	dst = appendNullableString(dst, t.LeafID)
	dst = append(dst, `,"nodes":[`...)
	if t.flat || t.Flat != nil {
		for i := range t.Flat {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"entry":`...)
			dst = appendEntry(dst, t.Flat[i].Entry)
			dst = append(dst, '}')
			if flush != nil && len(dst) >= chunkSize {
				dst = flush(dst)
			}
		}
		return append(dst, "]}"...)
	}
	dst = appendNodes(dst, t.Nodes, len(t.ents), flush)
	return append(dst, "]}"...)
}

// MarshalJSON writes the node and its subtree without recursion.
func (n *TreeNode) MarshalJSON() ([]byte, error) {
	return appendNodes(nil, []*TreeNode{n}, 0, nil), nil
}

// appendNodes writes a list of nodes (without the brackets) iteratively,
// handing full chunks to flush (when not nil). total, when known, is the
// number of nodes (it bounds the depth).
func appendNodes(dst []byte, list []*TreeNode, total int, flush func([]byte) []byte) []byte {
	type frame struct {
		list []*TreeNode
		i    int
	}
	stack := make([]frame, 1, max(16, total+1))
	stack[0] = frame{list: list}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i == len(top.list) {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				dst = append(dst, "]}"...)
			}
			continue
		}
		n := top.list[top.i]
		if top.i > 0 {
			dst = append(dst, ',')
		}
		top.i++
		if n == nil {
			dst = append(dst, "null"...)
			continue
		}
		dst = append(dst, `{"entry":`...)
		dst = appendEntry(dst, n.Entry)
		dst = append(dst, `,"children":[`...)
		stack = append(stack, frame{list: n.Children})
		if flush != nil && len(dst) >= chunkSize {
			dst = flush(dst)
		}
	}
	return dst
}

// chunkSize is how much WriteTo gathers before writing.
const chunkSize = 64 << 10

// chunkWriter hands chunks to an io.Writer, keeping the first error.
type chunkWriter struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

func (c *chunkWriter) flush(b []byte) []byte {
	if c.err == nil && len(b) > 0 {
		m, err := c.w.Write(b)
		c.n += int64(m)
		c.err = err
	}
	return b[:0]
}

// appendEntry writes a TreeEntry; the output equals jsonx.Marshal's.
func appendEntry(dst []byte, e *TreeEntry) []byte {
	if e == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, e.ID)
	dst = append(dst, `,"parentId":`...)
	dst = appendNullableString(dst, e.ParentID)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, e.Type)
	dst = append(dst, `,"timestamp":`...)
	dst = appendString(dst, e.Timestamp)
	if e.Label != "" {
		dst = append(dst, `,"label":`...)
		dst = appendString(dst, e.Label)
	}
	if e.Preview != nil {
		dst = append(dst, `,"preview":`...)
		dst = appendString(dst, *e.Preview)
	}
	if e.BrowseFields != nil {
		dst = appendBrowseFields(dst, e.BrowseFields)
	}
	return append(dst, '}')
}

func appendBrowseFields(dst []byte, e *BrowseFields) []byte {
	if e.Role != "" {
		dst = append(dst, `,"role":`...)
		dst = appendString(dst, e.Role)
	}
	if e.RawRole != "" {
		dst = append(dst, `,"rawRole":`...)
		dst = appendString(dst, e.RawRole)
	}
	if e.StopReason != "" {
		dst = append(dst, `,"stopReason":`...)
		dst = appendString(dst, e.StopReason)
	}
	if e.ErrorMessage != "" {
		dst = append(dst, `,"errorMessage":`...)
		dst = appendString(dst, e.ErrorMessage)
	}
	if e.ToolName != "" {
		dst = append(dst, `,"toolName":`...)
		dst = appendString(dst, e.ToolName)
	}
	if len(e.ToolArgs) > 0 {
		dst = append(dst, `,"toolArgs":`...)
		dst = append(dst, e.ToolArgs...)
	}
	if e.FormattedToolCall != nil {
		dst = append(dst, `,"formattedToolCall":`...)
		dst = appendString(dst, *e.FormattedToolCall)
	}
	if e.TokensBefore != nil {
		dst = append(dst, `,"tokensBefore":`...)
		dst = strconv.AppendInt(dst, *e.TokensBefore, 10)
	}
	for _, f := range [...]struct {
		key string
		v   *string
	}{{`,"provider":`, e.Provider}, {`,"modelId":`, e.ModelID}, {`,"thinkingLevel":`, e.ThinkingLevel}, {`,"summary":`, e.Summary}, {`,"customType":`, e.CustomType}} {
		if f.v != nil {
			dst = append(dst, f.key...)
			dst = appendString(dst, *f.v)
		}
	}
	return dst
}
