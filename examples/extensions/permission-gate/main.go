// Command permission-gate is a Pisces extension that asks the user before
// the agent runs a destructive bash command (rm -rf, git push --force, …).
//
// It speaks the extension protocol of docs/extensions.md with nothing but
// the standard library: build it and put the binary in
// ~/.pisces/agent/extensions/ (or pass it with -e):
//
//	go build -o ~/.pisces/agent/extensions/permission-gate ./examples/extensions/permission-gate
//
// Without a client that can answer (print mode, or a client that ignores
// extension UI requests) the confirmation is cancelled and the command is
// blocked.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"regexp"
	"strconv"
	"sync"
)

// destructive lists the commands that need a confirmation.
var destructive = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\brm\s+(.*\s)?-[a-zA-Z]*([rR][a-zA-Z]*f|f[a-zA-Z]*[rR])`), "recursive forced delete"},
	{regexp.MustCompile(`\brm\b.*\s(-[rR]|--recursive)\b.*\s(-f|--force)\b`), "recursive forced delete"},
	{regexp.MustCompile(`\brm\b.*\s(-f|--force)\b.*\s(-[rR]|--recursive)\b`), "recursive forced delete"},
	{regexp.MustCompile(`\bgit\s+push\b.*\s(--force\b|--force-with-lease\b|-f\b)`), "force push"},
	{regexp.MustCompile(`\bgit\s+reset\s+--hard\b`), "hard reset"},
	{regexp.MustCompile(`\bgit\s+clean\s+-[a-zA-Z]*f`), "git clean"},
	{regexp.MustCompile(`\bgit\s+branch\s+-D\b`), "branch deletion"},
	{regexp.MustCompile(`\bsudo\b`), "sudo"},
	{regexp.MustCompile(`\bmkfs(\.\w+)?\b`), "filesystem creation"},
	{regexp.MustCompile(`\bdd\s+.*\bof=`), "raw disk write"},
	{regexp.MustCompile(`\bchmod\s+(-R\s+)?0?777\b`), "world-writable permissions"},
	{regexp.MustCompile(`>\s*/dev/(sd|nvme|disk)`), "raw disk write"},
}

// message is any protocol message; only the fields of its type are set.
type message struct {
	Type     string          `json:"type"`
	ID       json.RawMessage `json:"id,omitempty"`
	Method   string          `json:"method,omitempty"`
	Params   json.RawMessage `json:"params,omitempty"`
	ParentID string          `json:"parentId,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
}

type gate struct {
	out     sync.Mutex
	mu      sync.Mutex
	seq     int
	waiting map[string]chan message // our requests awaiting a response
}

func main() {
	log.SetFlags(0) // stderr is prefixed by Pisces
	g := &gate{waiting: map[string]chan message{}}
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var m message
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				log.Printf("bad message: %v", jerr)
			} else {
				g.dispatch(m)
			}
		}
		if err != nil {
			return // stdin closed: Pisces is done with us
		}
	}
}

func (g *gate) dispatch(m message) {
	switch m.Type {
	case "init":
		g.write(map[string]any{
			"type": "register", "protocolVersion": 1, "name": "permission-gate",
			"hooks": []string{"tool_call"},
		})
	case "request":
		// Requests are handled concurrently: while one waits for the user,
		// the others (and the response to our confirm) keep flowing.
		go g.handle(m)
	case "response":
		g.mu.Lock()
		id := decodeID(m.ID)
		ch := g.waiting[id]
		delete(g.waiting, id)
		g.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (g *gate) handle(m message) {
	if m.Method != "tool_call" {
		g.write(map[string]any{"type": "response", "id": m.ID, "error": "unsupported method " + m.Method})
		return
	}
	var p struct {
		ToolName string `json:"toolName"`
		Args     struct {
			Command string `json:"command"`
		} `json:"args"`
	}
	_ = json.Unmarshal(m.Params, &p)
	result := map[string]any{} // empty: let the call go on
	if p.ToolName == "bash" {
		if what := classify(p.Args.Command); what != "" {
			if !g.confirm(decodeID(m.ID), "Allow "+what+"?", p.Args.Command) {
				result = map[string]any{"block": true, "reason": "Blocked by the permission gate: the user did not allow this " + what + " (" + p.Args.Command + ")"}
			}
		}
	}
	g.write(map[string]any{"type": "response", "id": m.ID, "result": result})
}

func classify(cmd string) string {
	for _, d := range destructive {
		if d.re.MatchString(cmd) {
			return d.what
		}
	}
	return ""
}

// confirm asks the user through Pisces; the dialog belongs to the hook
// request parent, so Pisces closes it if that request is aborted.
func (g *gate) confirm(parent, title, msg string) bool {
	g.mu.Lock()
	g.seq++
	id := "gate-" + strconv.Itoa(g.seq)
	ch := make(chan message, 1)
	g.waiting[id] = ch
	g.mu.Unlock()
	g.write(map[string]any{
		"type": "request", "id": id, "method": "ui.confirm", "parentId": parent,
		"params": map[string]any{"title": title, "message": msg, "timeout": 60000},
	})
	resp := <-ch
	var r struct {
		Confirmed bool `json:"confirmed"`
	}
	_ = json.Unmarshal(resp.Result, &r)
	return r.Confirmed
}

func decodeID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// write sends one message: a single line of JSON on stdout.
func (g *gate) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		log.Printf("encode: %v", err)
		return
	}
	g.out.Lock()
	defer g.out.Unlock()
	if _, err := fmt.Fprintf(os.Stdout, "%s\n", b); err != nil {
		os.Exit(0) // Pisces went away
	}
}
