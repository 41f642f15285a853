// Command webbench measures web mode (pisces --mode web) from outside, over
// real WebSocket connections on loopback:
//
//   - fan-out: N clients attached to one session while it streams a reply
//     of D deltas; every client must receive the whole reply and the run's
//     end. Reports the time until the last client is done and the server's
//     peak RSS;
//
//   - idle sessions: S sessions (generated files) loaded in one server, each
//     held by one connection. Reports the server's RSS;
//
//   - handshake: H times in a row, open a connection, send get_state and
//     wait for its response. Reports the time from the start of the
//     handshake to the response (minimum, median, 95th percentile).
//
//     go run ./bench/webbench [-clients 100] [-deltas 5000] [-no-merge] [-sessions 100] [-handshakes 200] [-bin PISCES] [-short]
//
// Without -bin it builds the static release binary (CGO_ENABLED=0) first.
// The figures are recorded in docs/performance.md, not asserted.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/pisces-agent/pisces/bench/sessgen"
)

const token = "webbench-token-0123456789abcdef"

// Options select the sizes of one run.
type Options struct {
	Bin        string
	Clients    int
	Deltas     int
	Sessions   int
	Handshakes int
	NoMerge    bool // --rpc-delta-interval 0: one frame per delta
	Log        func(format string, args ...any)
}

// Result holds the figures of one run.
type Result struct {
	FanOutClients   int
	FanOutDeltas    int
	FanOutTime      time.Duration
	FanOutFrames    int // frames of message_update the slowest client received
	FanOutPeakRSS   int64
	IdleSessions    int
	IdleRSS         int64
	IdleBaseRSS     int64 // the server with its default session, before the others
	Handshakes      int
	HandshakeMin    time.Duration
	HandshakeMedian time.Duration
	HandshakeP95    time.Duration
}

func main() {
	var o Options
	short := flag.Bool("short", false, "small sizes: a check that the harness works, not figures to quote")
	flag.StringVar(&o.Bin, "bin", "", "pisces binary (default: build ./cmd/pisces with CGO_ENABLED=0)")
	flag.IntVar(&o.Clients, "clients", 100, "clients on the streaming session")
	flag.IntVar(&o.Deltas, "deltas", 5000, "deltas of the streamed reply")
	flag.IntVar(&o.Sessions, "sessions", 100, "idle sessions loaded at once")
	flag.IntVar(&o.Handshakes, "handshakes", 200, "handshakes timed")
	flag.BoolVar(&o.NoMerge, "no-merge", false, "start the fan-out server with --rpc-delta-interval 0 (one frame per delta, as pi sends them)")
	flag.Parse()
	if *short {
		o.Clients, o.Deltas, o.Sessions, o.Handshakes = 10, 500, 10, 20
	}
	o.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	if o.Bin == "" {
		dir, err := os.MkdirTemp("", "webbench-bin")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		o.Bin = filepath.Join(dir, "pisces")
		cmd := exec.Command("go", "build", "-o", o.Bin, "./cmd/pisces")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fail(fmt.Errorf("building pisces: %w", err))
		}
	}
	r, err := Run(o)
	if err != nil {
		fail(err)
	}
	fmt.Printf("fan-out: %d clients, one session streaming %d deltas: all complete in %s (slowest client got %d message_update frames); server peak RSS %.1f MB\n",
		r.FanOutClients, r.FanOutDeltas, r.FanOutTime.Round(time.Millisecond), r.FanOutFrames, mb(r.FanOutPeakRSS))
	fmt.Printf("idle sessions: %d loaded, each held by a connection: server RSS %.1f MB (%.1f MB with only its default session)\n",
		r.IdleSessions, mb(r.IdleRSS), mb(r.IdleBaseRSS))
	fmt.Printf("handshake to first response (get_state), %d in a row: min %s, median %s, p95 %s\n",
		r.Handshakes, r.HandshakeMin.Round(10*time.Microsecond), r.HandshakeMedian.Round(10*time.Microsecond), r.HandshakeP95.Round(10*time.Microsecond))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "webbench:", err)
	os.Exit(1)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// server is one pisces --mode web process.
type server struct {
	cmd  *exec.Cmd
	base string // ws://127.0.0.1:PORT/ws
	done chan struct{}
}

func startServer(bin, dir string, args ...string) (*server, error) {
	cmd := exec.Command(bin, append([]string{"--mode", "web", "--port", "0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PISCES_WEB_TOKEN="+token)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ln, ok := <-lines:
			if !ok {
				return nil, errors.New("web mode exited before printing its address")
			}
			if ws, found := strings.CutPrefix(ln, "WebSocket: "); found {
				s.base = ws
				go func() {
					for range lines {
					}
				}()
				return s, nil
			}
		case <-timeout:
			s.stop()
			return nil, errors.New("web mode printed no address within 60 s")
		}
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// memory returns the server's VmRSS and VmHWM in bytes.
func (s *server) memory() (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, ln := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(ln, ":")
		f := strings.Fields(v)
		if !ok || len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			hwm = n << 10
		}
	}
	return rss, hwm
}

// client is one WebSocket connection.
type client struct {
	c *websocket.Conn
}

func dial(ctx context.Context, url string) (*client, error) {
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(64 << 20)
	return &client{c: c}, nil
}

func (c *client) send(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.c.Write(ctx, websocket.MessageText, b)
}

type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Success bool            `json:"success"`
	Error   string          `json:"error"`
	Data    json.RawMessage `json:"data"`
	Event   *struct {
		Type    string `json:"type"`
		Delta   string `json:"delta"`
		Content string `json:"content"`
	} `json:"assistantMessageEvent"`
}

func (c *client) read(ctx context.Context) (frame, error) {
	_, b, err := c.c.Read(ctx)
	if err != nil {
		return frame{}, err
	}
	var f frame
	err = json.Unmarshal(b, &f)
	return f, err
}

// until reads frames until one matches.
func (c *client) until(ctx context.Context, match func(frame) bool) (frame, error) {
	for {
		f, err := c.read(ctx)
		if err != nil {
			return f, err
		}
		if match(f) {
			return f, nil
		}
	}
}

func (c *client) close() { c.c.Close(websocket.StatusNormalClosure, "") }

// Run measures everything with o's sizes.
func Run(o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	r := &Result{}
	if err := fanOut(o, r); err != nil {
		return nil, fmt.Errorf("fan-out: %w", err)
	}
	if err := idleSessions(o, r); err != nil {
		return nil, fmt.Errorf("idle sessions: %w", err)
	}
	if err := handshakes(o, r); err != nil {
		return nil, fmt.Errorf("handshakes: %w", err)
	}
	return r, nil
}

func fanOut(o Options, r *Result) error {
	dir, err := os.MkdirTemp("", "webbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	text := strings.Repeat("abcdefghij", o.Deltas/10+1)[:o.Deltas]
	script, _ := json.Marshal(map[string]any{"chunkSize": 1, "turns": []any{map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}}})
	sp := filepath.Join(dir, "script.json")
	if err := os.WriteFile(sp, script, 0o644); err != nil {
		return err
	}
	args := []string{"--agent-dir", filepath.Join(dir, "agent"), "--provider", "scripted", "--script", sp, "--no-extensions", "--tools", "read"}
	if o.NoMerge {
		args = append(args, "--rpc-delta-interval", "0")
	}
	s, err := startServer(o.Bin, dir, args...)
	if err != nil {
		return err
	}
	defer s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	clients := make([]*client, o.Clients)
	for i := range clients {
		c, err := dial(ctx, s.base)
		if err != nil {
			return err
		}
		defer c.close()
		// Attached: the session_changed after ready.
		if _, err := c.until(ctx, func(f frame) bool { return f.Type == "session_changed" }); err != nil {
			return err
		}
		clients[i] = c
	}
	o.Log("fan-out: %d clients attached; prompting", o.Clients)
	type got struct {
		text   int
		frames int
		err    error
	}
	results := make([]got, len(clients))
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var g got
			for {
				f, err := c.read(ctx)
				if err != nil {
					g.err = err
					break
				}
				if f.Type == "message_update" && f.Event != nil && f.Event.Type == "text_delta" {
					g.text += len(f.Event.Delta)
					g.frames++
				}
				if f.Type == "agent_settled" {
					break
				}
			}
			results[i] = g
		}()
	}
	if err := clients[0].send(ctx, map[string]any{"type": "prompt", "message": "stream it"}); err != nil {
		return err
	}
	wg.Wait()
	r.FanOutTime = time.Since(start)
	_, r.FanOutPeakRSS = s.memory()
	r.FanOutClients, r.FanOutDeltas = o.Clients, o.Deltas
	for i, g := range results {
		if g.err != nil {
			return fmt.Errorf("client %d: %w", i, g.err)
		}
		if g.text != len(text) {
			return fmt.Errorf("client %d received %d characters of text deltas, want %d", i, g.text, len(text))
		}
		r.FanOutFrames = max(r.FanOutFrames, g.frames)
	}
	return nil
}

func idleSessions(o Options, r *Result) error {
	dir, err := os.MkdirTemp("", "webbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	proj := filepath.Join(dir, "project")
	sessDir := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return err
	}
	var paths []string
	for i := 1; i <= o.Sessions; i++ {
		p, err := sessgen.WriteFile(sessDir, sessgen.Options{Entries: 40, Seed: uint64(i), Cwd: proj})
		if err != nil {
			return err
		}
		paths = append(paths, p)
	}
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[]}`), 0o644); err != nil {
		return err
	}
	s, err := startServer(o.Bin, proj, "--agent-dir", filepath.Join(dir, "agent"), "--session-dir", sessDir,
		"--provider", "scripted", "--script", script, "--no-extensions", "--tools", "read")
	if err != nil {
		return err
	}
	defer s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The server with its default session only.
	c0, err := dial(ctx, s.base)
	if err != nil {
		return err
	}
	defer c0.close()
	if _, err := c0.until(ctx, func(f frame) bool { return f.Type == "session_changed" }); err != nil {
		return err
	}
	r.IdleBaseRSS, _ = s.memory()
	for i, p := range paths {
		c, err := dial(ctx, s.base+"?session="+p)
		if err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		defer c.close()
		if _, err := c.until(ctx, func(f frame) bool { return f.Type == "session_changed" }); err != nil {
			return err
		}
		// The session is loaded and answers.
		if err := c.send(ctx, map[string]any{"type": "get_state", "id": "s"}); err != nil {
			return err
		}
		f, err := c.until(ctx, func(f frame) bool { return f.Type == "response" && f.ID == "s" })
		if err != nil {
			return err
		}
		if !f.Success {
			return fmt.Errorf("session %d: get_state: %s", i, f.Error)
		}
	}
	r.IdleSessions = o.Sessions
	r.IdleRSS, _ = s.memory()
	return nil
}

func handshakes(o Options, r *Result) error {
	dir, err := os.MkdirTemp("", "webbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[]}`), 0o644); err != nil {
		return err
	}
	s, err := startServer(o.Bin, dir, "--agent-dir", filepath.Join(dir, "agent"), "--provider", "scripted", "--script", script, "--no-extensions", "--tools", "read")
	if err != nil {
		return err
	}
	defer s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var times []time.Duration
	for i := 0; i < o.Handshakes; i++ {
		t0 := time.Now()
		c, err := dial(ctx, s.base)
		if err != nil {
			return err
		}
		if err := c.send(ctx, map[string]any{"type": "get_state", "id": "h"}); err != nil {
			return err
		}
		f, err := c.until(ctx, func(f frame) bool { return f.Type == "response" && f.ID == "h" })
		d := time.Since(t0)
		c.close()
		if err != nil {
			return err
		}
		if !f.Success {
			return fmt.Errorf("get_state: %s", f.Error)
		}
		times = append(times, d)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	r.Handshakes = len(times)
	r.HandshakeMin = times[0]
	r.HandshakeMedian = times[len(times)/2]
	r.HandshakeP95 = times[len(times)*95/100]
	return nil
}
