package browse

import (
	"encoding/json"
	"io"

	"github.com/pisces-agent/pisces/internal/session"
)

// RawNode is a node of pi's get_tree in the flat form: the entry as stored,
// its parent in the tree (null for a root, orphans and self-parented entries
// included) instead of children, and its label.
type RawNode struct {
	Entry          json.RawMessage `json:"entry"`
	ParentID       *string         `json:"parentId"`
	Label          string          `json:"label,omitempty"`
	LabelTimestamp string          `json:"labelTimestamp,omitempty"`
}

// RawTreeFlat lists every entry of s depth-first (pi's getTree order:
// roots in file order, children by timestamp).
func RawTreeFlat(s *session.Session) []RawNode {
	roots := s.Tree()
	out := make([]RawNode, 0, s.Len())
	type item struct {
		n      *session.TreeNode
		parent *string
	}
	stack := make([]item, 0, 64)
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, item{n: roots[i]})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, RawNode{Entry: rawEntry(it.n.Entry), ParentID: it.parent, Label: it.n.Label, LabelTimestamp: it.n.LabelTimestamp})
		id := &it.n.Entry.ID
		for i := len(it.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{n: it.n.Children[i], parent: id})
		}
	}
	return out
}

// rawEntry is the entry's JSON as stored.
func rawEntry(e *session.Entry) json.RawMessage {
	if len(e.Raw) > 0 {
		return e.Raw
	}
	b := appendString([]byte(`{"type":`), e.Type)
	b = append(b, `,"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"parentId":`...)
	b = appendNullableString(b, e.ParentID)
	b = append(b, `,"timestamp":`...)
	b = appendString(b, e.Timestamp)
	return append(b, '}')
}

// RawTreeResult is pi's get_tree answer, {tree, leafId}: nested nodes
// {entry, children, label?, labelTimestamp?}, or with Flat the RawNode list.
// MarshalJSON is iterative, so any depth encodes.
type RawTreeResult struct {
	Tree   []*session.TreeNode
	LeafID *string
	Flat   []RawNode // used instead of Tree when not nil

	total   int // number of entries (bounds the depth), when known
	sizeEst int // estimated JSON size
}

// RawTree builds pi's get_tree answer for s (flat: the RawNode list).
func RawTree(s *session.Session, flat bool) RawTreeResult {
	res := RawTreeResult{LeafID: leafPtr(s.LeafID())}
	if flat {
		res.Flat = RawTreeFlat(s)
		for i := range res.Flat {
			n := &res.Flat[i]
			res.sizeEst += len(n.Entry) + len(n.Label) + len(n.LabelTimestamp) + 64
		}
	} else {
		res.Tree = s.Tree()
		res.total = s.Len()
		for _, e := range s.Entries() {
			res.sizeEst += len(e.Raw) + 64
		}
		for _, l := range s.Labels() {
			res.sizeEst += len(l) + 64
		}
	}
	return res
}

// SizeHint is about the length of the result's JSON.
func (r *RawTreeResult) SizeHint() int { return r.sizeEst }

// MarshalJSON writes {"tree":[…],"leafId":…}.
func (r RawTreeResult) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(nil), nil
}

// AppendJSON appends the JSON of r to dst.
func (r *RawTreeResult) AppendJSON(dst []byte) []byte {
	if size := r.sizeEst; size > 0 && cap(dst)-len(dst) < size {
		grown := make([]byte, len(dst), len(dst)+size+size/8)
		copy(grown, dst)
		dst = grown
	}
	return r.appendJSON(dst, nil)
}

// WriteTo streams the JSON of r to w in chunks.
func (r *RawTreeResult) WriteTo(w io.Writer) (int64, error) {
	cw := chunkWriter{w: w, buf: make([]byte, 0, chunkSize+4096)}
	cw.buf = r.appendJSON(cw.buf, cw.flush)
	cw.buf = cw.flush(cw.buf)
	return cw.n, cw.err
}

func (r *RawTreeResult) appendJSON(dst []byte, flush func([]byte) []byte) []byte {
	dst = append(dst, `{"tree":[`...)
	if r.Flat != nil {
		for i := range r.Flat {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendRawNode(dst, &r.Flat[i])
			if flush != nil && len(dst) >= chunkSize {
				dst = flush(dst)
			}
		}
	} else {
		dst = appendRawTree(dst, r.Tree, r.total, flush)
	}
	dst = append(dst, `],"leafId":`...)
	dst = appendNullableString(dst, r.LeafID)
	return append(dst, '}')
}

func appendRawNode(dst []byte, n *RawNode) []byte {
	dst = append(dst, `{"entry":`...)
	dst = append(dst, n.Entry...)
	dst = append(dst, `,"parentId":`...)
	dst = appendNullableString(dst, n.ParentID)
	dst = appendLabel(dst, n.Label, n.LabelTimestamp)
	return append(dst, '}')
}

func appendLabel(dst []byte, label, ts string) []byte {
	if label != "" {
		dst = append(dst, `,"label":`...)
		dst = appendString(dst, label)
	}
	if ts != "" {
		dst = append(dst, `,"labelTimestamp":`...)
		dst = appendString(dst, ts)
	}
	return dst
}

// appendRawTree appends the nested raw nodes of roots (without the
// enclosing brackets), iteratively.
func appendRawTree(dst []byte, roots []*session.TreeNode, total int, flush func([]byte) []byte) []byte {
	type frame struct {
		owner *session.TreeNode // whose children these are (nil for the roots)
		list  []*session.TreeNode
		i     int
	}
	stack := make([]frame, 1, max(16, total+1))
	stack[0] = frame{list: roots}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.i == len(top.list) {
			owner := top.owner
			stack = stack[:len(stack)-1]
			if owner != nil {
				dst = append(dst, ']')
				dst = appendLabel(dst, owner.Label, owner.LabelTimestamp)
				dst = append(dst, '}')
			}
			continue
		}
		n := top.list[top.i]
		if top.i > 0 {
			dst = append(dst, ',')
		}
		top.i++
		dst = append(dst, `{"entry":`...)
		dst = append(dst, rawEntry(n.Entry)...)
		dst = append(dst, `,"children":[`...)
		stack = append(stack, frame{owner: n, list: n.Children})
		if flush != nil && len(dst) >= chunkSize {
			dst = flush(dst)
		}
	}
	return dst
}
