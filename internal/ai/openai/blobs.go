package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// A request body repeats the whole conversation, and one message of it may
// run to tens of megabytes (a huge prompt, a long tool output). Encoding
// the body into one buffer holds all of that a second time (and more while
// the buffer grows). So long strings are not encoded with the request:
// blobs gives the encoder a short placeholder for each, and the body is
// sent as the pieces of that encoding with each long string escaped a
// piece at a time, straight from the message's memory, where its
// placeholder stood (jsonx.StringReader). The server reads the same JSON;
// only the escaping of characters JSON does not require escaping (such as
// '<' in a reasoning text) may differ within those strings.

// blobMin is the length from which a string is sent as a blob.
const blobMin = 64 << 10

// blobs collects the long strings of one request.
type blobs struct {
	prefix string     // "pisces-blob-<random>-": no placeholder collides with text
	parts  [][]string // each blob: its pieces, concatenated
}

func newBlobs() *blobs {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &blobs{prefix: "pisces-blob-" + hex.EncodeToString(b[:]) + "-"}
}

// str returns s, or a placeholder for it when it is long.
func (b *blobs) str(s string) string { return b.join(s) }

// join returns the concatenation of parts, or a placeholder for it when it
// is long (the parts are then not copied into one string).
func (b *blobs) join(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if b == nil || n < blobMin || !joinable(parts) {
		switch len(parts) {
		case 0:
			return ""
		case 1:
			return parts[0]
		}
		var buf bytes.Buffer
		buf.Grow(n)
		for _, p := range parts {
			buf.WriteString(p)
		}
		return buf.String()
	}
	b.parts = append(b.parts, parts)
	return b.prefix + strconv.Itoa(len(b.parts)-1) + "."
}

// joinable reports whether escaping the parts one after another is
// escaping their concatenation: no part after the first starts inside a
// character.
func joinable(parts []string) bool {
	for i, p := range parts {
		if i > 0 && p != "" && !utf8.RuneStart(p[0]) {
			return false
		}
	}
	return true
}

// joinWith is join of items separated by sep.
func (b *blobs) joinWith(items []string, sep string) string {
	parts := make([]string, 0, 2*len(items))
	for i, s := range items {
		if i > 0 && sep != "" {
			parts = append(parts, sep)
		}
		parts = append(parts, s)
	}
	return b.join(parts...)
}

// body returns the request body for the encoding small of the request
// with placeholders: a reader of it, its length, and a function that
// returns a fresh reader (a redirect sends the body again).
func (b *blobs) body(small []byte) (io.Reader, int64, func() (io.ReadCloser, error)) {
	r, n := b.splice(small)
	again := func() (io.ReadCloser, error) {
		r, _ := b.splice(small)
		return io.NopCloser(r), nil
	}
	return r, int64(n), again
}

// splice returns the body with every quoted placeholder replaced by its
// blob's JSON string, and its length.
func (b *blobs) splice(small []byte) (io.Reader, int) {
	var readers []io.Reader
	n := 0
	quoted := []byte(`"` + b.prefix)
	rest := small
	for {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			break
		}
		end := bytes.IndexByte(rest[i+len(quoted):], '.')
		if end < 0 || i+len(quoted)+end+1 >= len(rest) || rest[i+len(quoted)+end+1] != '"' {
			break
		}
		k, err := strconv.Atoi(string(rest[i+len(quoted) : i+len(quoted)+end]))
		if err != nil || k < 0 || k >= len(b.parts) {
			break
		}
		readers = append(readers, bytes.NewReader(rest[:i]))
		n += i
		readers = append(readers, jsonx.NewStringReader(b.parts[k]...))
		n += jsonx.StringReaderLen(b.parts[k]...)
		rest = rest[i+len(quoted)+end+2:]
	}
	readers = append(readers, bytes.NewReader(rest))
	n += len(rest)
	return io.MultiReader(readers...), n
}
