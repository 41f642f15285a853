//go:build unix

package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/testenv"
)

// BenchmarkStartWithServers measures (records, does not assert) the time
// from starting pisces in RPC mode to its first get_state response, with
// no MCP server and with five stdio servers that take a second to start
// (they connect in the background, so the answer must not wait for them),
// and the resident memory of one connected server process.
//
//	go test -run '^$' -bench StartWithServers -benchtime 5x ./internal/mcp
func BenchmarkStartWithServers(b *testing.B) {
	bin, err := testenv.PiscesBinary()
	if err != nil {
		b.Fatal(err)
	}
	exe, _ := os.Executable()
	for _, n := range []int{0, 5} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			var entries []string
			for i := range n {
				script, _ := json.Marshal(`sleep 1; exec "` + exe + `"`)
				entries = append(entries, fmt.Sprintf(`"s%d":{"command":"/bin/sh","args":["-c",%s],"env":{"PISCES_TEST_MCP_SERVER":"1"},"exposure":"direct"}`, i, script))
			}
			agent := filepath.Join(dir, "agent")
			os.MkdirAll(agent, 0o755)
			os.WriteFile(filepath.Join(agent, FileName), []byte(`{"mcpServers":{`+strings.Join(entries, ",")+`}}`), 0o644)
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				cmd := exec.Command(bin, "--mode", "rpc", "--agent-dir", agent, "--no-session")
				stdin, _ := cmd.StdinPipe()
				stdout, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				stdin.Write([]byte(`{"id":"s","type":"get_state"}` + "\n"))
				sc := bufio.NewScanner(stdout)
				sc.Buffer(make([]byte, 1<<20), 16<<20)
				for sc.Scan() {
					if strings.Contains(sc.Text(), `"command":"get_state"`) {
						break
					}
				}
				total += time.Since(start)
				stdin.Close()
				for sc.Scan() {
				}
				cmd.Wait()
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/first-get_state")
			b.ReportMetric(clientRSS(b, bin, agent, n), "MB-rss-pisces-connected")
		})
	}
	b.Run("rss-per-server-process", func(b *testing.B) {
		_, s := newManager(b, `"test":`+stdioEntryB(b))
		for b.Loop() {
			settleB(b, s)
		}
		srv := s.Servers()[0]
		srv.mu.Lock()
		pid := srv.conn.cmd.Process.Pid
		srv.mu.Unlock()
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			b.Skip("no /proc")
		}
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				b.ReportMetric(float64(kb)/1024, "MB-rss/server")
			}
		}
	})
}

// clientRSS starts pisces, waits for its n servers to connect (a prompt
// waits for direct servers; mcp_status is polled) and returns its RSS.
func clientRSS(b *testing.B, bin, agent string, n int) float64 {
	cmd := exec.Command(bin, "--mode", "rpc", "--agent-dir", agent, "--no-session")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	connected := 0
	for connected < n && sc.Scan() {
		if strings.Contains(sc.Text(), `"state":"connected"`) {
			connected++
		}
	}
	stdin.Write([]byte(`{"id":"s","type":"get_state"}` + "\n"))
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"command":"get_state"`) {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
