package rpcmode

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/rpc"
)

// rawBody is streamedData over fixed bytes.
type rawBody []byte

func (b rawBody) MarshalJSON() ([]byte, error) { return b, nil }
func (b rawBody) SizeHint() int                { return len(b) }
func (b rawBody) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(b)
	return int64(n), err
}

// A response whose data is streamed is written as the same line as one
// holding that data.
func TestStreamedResponseFraming(t *testing.T) {
	data := `{"sessions":[` + strings.Repeat(`{"a":"x"},`, 20000) + `{"a":"y"}],"total":3}`
	for _, id := range []string{"", "q1"} {
		var out bytes.Buffer
		w := newWriter(&out, 0, io.Discard)
		w.respond(&rpc.Response{ID: id, Command: "list_sessions", Success: true}, rawBody(data))
		w.response(&rpc.Response{ID: id, Command: "list_sessions", Success: true, Data: json.RawMessage(data)})
		w.close()
		want, _ := rpc.Response{ID: id, Command: "list_sessions", Success: true, Data: json.RawMessage(data)}.MarshalJSON()
		lines := strings.Split(out.String(), "\n")
		if len(lines) != 3 || lines[0] != string(want) || lines[1] != string(want) || lines[2] != "" {
			t.Fatalf("id %q: got %d lines, first %.200q", id, len(lines), lines[0])
		}
	}
}

// The output pipe grows for a large answer; what goes through it is the
// same.
func TestStreamedResponseThroughPipe(t *testing.T) {
	r, wf, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data := `{"x":"` + strings.Repeat("y", 3<<20) + `"}`
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	w := newWriter(wf, 0, io.Discard)
	w.respond(&rpc.Response{ID: "a", Command: "list_sessions", Success: true}, rawBody(data))
	w.close()
	wf.Close()
	want, _ := rpc.Response{ID: "a", Command: "list_sessions", Success: true, Data: json.RawMessage(data)}.MarshalJSON()
	if b := <-got; string(b) != string(want)+"\n" {
		t.Fatalf("got %d bytes, want %d", len(b), len(want)+1)
	}
}
