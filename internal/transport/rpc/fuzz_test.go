package rpcmode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/testenv"
)

// fuzzServer is a server over an in-memory session whose stdout is read
// line by line: each fuzz input is one line, followed by a get_state whose
// answer shows the server still reads and answers.
type fuzzServer struct {
	sess   *core.Session
	dir    string
	srv    *Server
	in     *io.PipeWriter
	served chan struct{}
	stderr *testenv.LockedBuffer
	n      int // inputs sent

	mu      sync.Mutex
	cond    *sync.Cond
	ids     map[string]int // responses seen, by id
	bad     []string       // stdout lines that are not one JSON object
	readErr error
}

func newFuzzServer(t *testing.T) *fuzzServer {
	dir, err := os.MkdirTemp("", "pisces-fuzz")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := scriptedSession(dir, `{"turns":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	outR, outW := io.Pipe()
	inR, inW := io.Pipe()
	fs := &fuzzServer{sess: sess, dir: dir, in: inW, served: make(chan struct{}), stderr: &testenv.LockedBuffer{}, ids: map[string]int{}}
	fs.cond = sync.NewCond(&fs.mu)
	fs.srv = New(sess, outW, Options{DeltaInterval: 0, Stderr: fs.stderr})
	go func() {
		defer close(fs.served)
		fs.srv.Serve(inR, nil)
		outW.Close()
	}()
	go func() {
		br := bufio.NewReaderSize(outR, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var v struct {
					Type string  `json:"type"`
					ID   *string `json:"id"`
				}
				fs.mu.Lock()
				if !json.Valid(line) || json.Unmarshal(line, &v) != nil || v.Type == "" {
					fs.bad = append(fs.bad, string(line))
				} else if v.Type == "response" && v.ID != nil {
					fs.ids[*v.ID]++
				}
				fs.cond.Broadcast()
				fs.mu.Unlock()
			}
			if err != nil {
				fs.mu.Lock()
				fs.readErr = err
				fs.cond.Broadcast()
				fs.mu.Unlock()
				return
			}
		}
	}()
	return fs
}

func (fs *fuzzServer) close() {
	fs.sess.Abort()
	fs.in.Close()
	<-fs.served
	fs.sess.Close()
	os.RemoveAll(fs.dir)
}

// waitID waits until a response with id has been seen.
func (fs *fuzzServer) waitID(id string, limit time.Duration) bool {
	timer := time.AfterFunc(limit, func() {
		fs.mu.Lock()
		fs.cond.Broadcast()
		fs.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(limit)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for fs.ids[id] == 0 && fs.readErr == nil && time.Now().Before(deadline) {
		fs.cond.Wait()
	}
	return fs.ids[id] > 0
}

// noResponse are the lines answered without a response, by design.
var noResponse = map[string]bool{"extension_ui_response": true, "host_tool_update": true, "host_tool_result": true}

// sideEffects are commands a fuzzer must not run: they run shell commands,
// write, move or scan files outside the test's directories, or reach the
// vendors' login servers.
var sideEffects = map[string]bool{"bash": true, "export_html": true, "delete_session": true,
	"rename_session": true, "switch_session": true, "list_sessions": true, "login": true, "logout": true}

func (fs *fuzzServer) exchange(t *testing.T, line []byte) {
	t.Helper()
	// The server reads the line's first JSON value; an object carries the
	// id of the one response (an error when more data follows it), except
	// for the reply lines, which get none.
	var obj map[string]any
	expect := ""
	if dec := json.NewDecoder(bytes.NewReader(line)); dec.Decode(&obj) == nil && obj != nil {
		if id, ok := obj["id"].(string); ok {
			expect = id
		}
		if typ, _ := obj["type"].(string); noResponse[typ] && !dec.More() {
			expect = ""
		}
	}
	fs.n++
	sentinel := fmt.Sprintf("fuzz-sentinel-%d", fs.n)
	written := make(chan error, 1)
	go func() {
		_, err := fmt.Fprintf(fs.in, "%s\n{\"id\":%q,\"type\":\"get_state\"}\n", line, sentinel)
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("writing to the server: %v", err)
		}
	case <-time.After(20 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("the server stopped reading stdin at %q:\n%s", line, buf[:runtime.Stack(buf, true)])
	}
	if !fs.waitID(sentinel, 20*time.Second) {
		t.Fatalf("the server no longer answers after %q (stderr: %s)", line, fs.stderr.String())
	}
	if expect != "" && !fs.waitID(expect, 20*time.Second) {
		t.Fatalf("no response with id %q to %q", expect, line)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.bad) > 0 {
		t.Fatalf("stdout line that is not one JSON object: %.300q (after %q)", fs.bad[0], line)
	}
	if expect != "" && fs.ids[expect] != 1 {
		t.Fatalf("%d responses with id %q to %q", fs.ids[expect], expect, line)
	}
	clear(fs.ids)
	if s := fs.stderr.String(); strings.Contains(s, "panicked") {
		t.Fatalf("a handler panicked on %q: %s", line, s)
	}
}

var fuzzSeeds = []string{
	`{"type":"get_state"}`, `{"id":"1","type":"get_state"}`, `{"id":"2","type":"prompt","message":"hi"}`,
	`{"id":"3","type":"prompt","message":"x","images":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
	`{"id":"4","type":"prompt","message":"x","images":[{"type":"image","source":{"type":"url","url":"http://a"}}]}`,
	`{"id":"5","type":"steer","message":"s"}`, `{"id":"6","type":"abort"}`, `{"id":"7","type":"set_model","provider":"scripted","modelId":"scripted"}`,
	`{"id":"8","type":"set_thinking_level","level":"high"}`, `{"id":"9","type":"navigate_tree","targetId":"x"}`,
	`{"id":"a","type":"get_entries","since":"nope"}`, `{"id":"b","type":"set_session_name","name":"  "}`, `{"id":"c","type":"compact"}`,
	`{"id":"d","type":"new_session"}`, `{"id":"e","type":"fork","entryId":"x"}`, `{"id":"f","type":"get_session_tree","view":"browse","flat":true}`,
	`{"id":"g","type":"set_active_tools","toolNames":["read","nope"]}`, `{"id":"h","type":"set_todos","phases":[{"name":"p","tasks":[{"content":"t","status":"pending"}]}]}`,
	`{"id":"i","type":"set_host_tools","tools":[{"name":"h","description":"d","parameters":{"type":"object"}}]}`,
	`{"type":"extension_ui_response","id":"u1","value":"v"}`, `{"type":"host_tool_result","id":"h1","result":"r"}`,
	`{"id":1,"type":"get_state"}`, `{"id":"j"}`, `{"id":"k","type":7}`, `{"id":"l","type":"nope"}`, `[1,2]`, `"str"`, `{`, `{"id":"m","type":"get_state"} {"x":1}`,
	`{"id":"n","type":"prompt"}`, `{"id":"o","type":"set_steering_mode","mode":"sometimes"}`, `{"type":"get_state","id":"p","id":"q"}`,
	`{"id":"r","type":"prompt","message":"` + strings.Repeat("long ", 20000) + `"}`, `{"id":"s","type":"abort_and_prompt","message":"again"}`,
	`{"id":"t","type":"get_tree","flat":true}`, `{"id":"u","type":"set_label","entryId":"x","label":"l"}`, `{"id":"v","type":"get_fork_messages"}`,
	`{"id":"w","type":"cycle_model"}`, `{"id":"x","type":"get_context_usage"}`, `{"id":"y","type":"get_messages"}`, `{"id":"z","type":"clear_queue"}`,
	"{\"id\":\"\xff\",\"type\":\"get_state\"}", `{"id":"\ud800","type":"get_state"}`, `{"ty\u0070e":"get_state","id":"esc"}`,
}

// Any line: no panic, one JSON response carrying its id when it had one
// (none for the reply lines answered without one), every output line is
// one JSON object, and the server answers the next command.
func FuzzCommandLine(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	var fs *fuzzServer
	f.Cleanup(func() {
		if fs != nil {
			fs.close()
		}
	})
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\n") {
			return // one line per input
		}
		// The server reads the first JSON value of a line (and takes it
		// when nothing but a closing bracket follows): skip by that value.
		var obj map[string]any
		if json.NewDecoder(bytes.NewReader(line)).Decode(&obj) == nil {
			if typ, _ := obj["type"].(string); sideEffects[typ] {
				return
			}
			if id, _ := obj["id"].(string); strings.HasPrefix(id, "fuzz-sentinel-") {
				return
			}
		}
		if fs == nil || fs.n >= 400 {
			// A fresh server now and then: prompts accumulate in the
			// session.
			if fs != nil {
				fs.close()
			}
			fs = newFuzzServer(t)
		}
		fs.exchange(t, line)
	})
}
