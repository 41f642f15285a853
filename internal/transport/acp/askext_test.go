package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// askExtension is an extension (the test binary with
// PISCES_TEST_EXTENSION set) with one command, ask: it asks a confirm that
// no tool call is tied to, then shows the answer with ui.notify.
func askExtension() {
	var out sync.Mutex
	write := func(v any) {
		b, _ := json.Marshal(v)
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, "%s\n", b)
	}
	type msg struct {
		Type   string          `json:"type"`
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	var mu sync.Mutex
	waiting := map[string]chan msg{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	seq := 0
	for in.Scan() {
		var m msg
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Type {
		case "init":
			write(map[string]any{"type": "register", "protocolVersion": 1, "name": "ask",
				"commands": []map[string]any{{"name": "ask", "description": "Asks a question"}}})
		case "response":
			var id string
			_ = json.Unmarshal(m.ID, &id)
			mu.Lock()
			ch := waiting[id]
			mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case "request":
			if m.Method != "run_command" {
				write(map[string]any{"type": "response", "id": m.ID, "error": "unsupported"})
				continue
			}
			seq++
			qid := fmt.Sprintf("q%d", seq)
			ch := make(chan msg, 1)
			mu.Lock()
			waiting[qid] = ch
			mu.Unlock()
			var parent string
			_ = json.Unmarshal(m.ID, &parent)
			go func(req msg) {
				write(map[string]any{"type": "request", "id": qid, "method": "ui.confirm", "parentId": parent,
					"params": map[string]any{"title": "Proceed?", "message": "the ask command wants to know"}})
				resp := <-ch
				var r struct {
					Confirmed bool `json:"confirmed"`
				}
				_ = json.Unmarshal(resp.Result, &r)
				write(map[string]any{"type": "request", "method": "ui.notify", "params": map[string]any{"message": fmt.Sprintf("answer: confirmed=%v", r.Confirmed)}})
				write(map[string]any{"type": "response", "id": req.ID, "result": map[string]any{}})
			}(m)
		}
	}
}
