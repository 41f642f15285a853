package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/bench/mockllm"
)

// optIn measurements run only when -only names them: they take long and
// measure bounds rather than speed.
var optIn = map[string]bool{"stall": true, "bigprompt": true}

// 7. A client that stops reading stdout while a long reply streams: how
// the agent's resident set grows meanwhile, and whether an abort sent
// during the stall is carried out (its answer and agent_settled arrive once
// the client reads again).
func (b *bench) stalledClient() error {
	const deltaSize = 1000
	n := 300_000 // 300 MB of text: more than the stall lets through
	if b.cfg.short {
		n = 30_000
	}
	d := strings.Repeat("x", deltaSize-1) + " "
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = d // one string, shared: the mock holds 1 kB
	}
	b.mock.SetScript(mockllm.Script{Turns: []mockllm.Turn{{Deltas: deltas, OutputTokens: n}}})
	g := fmt.Sprintf("stalled client (reply of %d × %d B deltas, stdout unread for %s)", n, deltaSize, b.cfg.stallFor)
	b.alternate(func(ag *agent) func(bool) error {
		growR := b.result(ag, g, "RSS growth over the stall (VmRSS)", "MB", "", 0)
		rateR := b.result(ag, g, "RSS growth rate, second half of the stall", "MB/s", "", 0)
		peakR := b.result(ag, g, "peak RSS (VmHWM) at the end of the stall", "MB", "", 0)
		abortR := b.result(ag, g, "abort sent during the stall: reading resumed → its response", "ms", "", 0)
		return func(record bool) error {
			a, err := b.startReady(ag, b.workDir, "--model", "mock/mock-model", "--no-session")
			if err != nil {
				return err
			}
			from := a.Mark()
			if _, _, err := b.prompt(a, "write a very long answer"); err != nil {
				a.Kill()
				return err
			}
			if _, _, err := a.WaitEvent(from, "message_update"); err != nil {
				a.Kill()
				return err
			}
			a.Pause()
			rss0, _, err := a.Memory()
			if err != nil {
				a.Kill()
				return err
			}
			t0 := time.Now()
			var rssHalf int64
			tick := time.NewTicker(100 * time.Millisecond)
			for time.Since(t0) < b.cfg.stallFor {
				<-tick.C
				if rssHalf == 0 && time.Since(t0) >= b.cfg.stallFor/2 {
					rssHalf, _, _ = a.Memory()
				}
			}
			tick.Stop()
			rss1, hwm, _ := a.Memory()
			half := time.Since(t0) - b.cfg.stallFor/2
			abortID, _, err := a.Send(map[string]any{"type": "abort"})
			if err != nil {
				a.Kill()
				return err
			}
			mark := a.Mark()
			a.Resume()
			t1 := time.Now()
			resp, err := a.WaitResponse(mark, abortID)
			if err != nil {
				a.Kill()
				return fmt.Errorf("abort sent during the stall: %w", err)
			}
			took := time.Since(t1)
			_, st, err := a.WaitEvent(from, "agent_settled")
			if err != nil {
				a.Kill()
				return err
			}
			if st.Raw != nil && !strings.Contains(string(st.Raw), `"aborted":true`) {
				a.Kill()
				return fmt.Errorf("the run was not aborted: %s", st.Raw)
			}
			if _, err := closeAgent(a); err != nil {
				return err
			}
			if !resp.Success {
				return errors.New("abort failed: " + resp.Error)
			}
			if record {
				growR.Runs = append(growR.Runs, mb(rss1-rss0))
				rateR.Runs = append(rateR.Runs, mb(rss1-rssHalf)/half.Seconds())
				peakR.Runs = append(peakR.Runs, mb(hwm))
				abortR.Runs = append(abortR.Runs, ms(took))
			}
			return nil
		}
	})
	return nil
}

// 8. One very large prompt (-prompt-mb, default 50 MB of text) answered by
// the mock, the client reading everything: time and peak resident set.
func (b *bench) bigPrompt() error {
	size := b.cfg.promptMB << 20
	if b.cfg.short && !isSet("prompt-mb") {
		size = 5 << 20
	}
	const line = "The quick brown fox jumps over the lazy dog, line after line of a very large prompt.\n"
	msg := strings.Repeat(line, size/len(line)+1)[:size]
	b.mock.SetScript(mockllm.Script{Turns: []mockllm.Turn{{Text: "I have read it all.", TextChunks: 4}}})
	sessions := filepath.Join(b.tmp, "bigprompt-sessions")
	for _, v := range []struct {
		label string
		args  []string
	}{
		{"session written", []string{"--session-dir", sessions}},
		{"--no-session", []string{"--no-session"}},
	} {
		g := fmt.Sprintf("%d MB prompt, %s", size>>20, v.label)
		b.alternate(func(ag *agent) func(bool) error {
			respR := b.result(ag, g, "prompt written → its response", "ms", "", 0)
			endR := b.result(ag, g, "prompt written → agent_end", "ms", "", 0)
			// The targets are set for 50 MB, where the process's own
			// resident set (about 20 MB idle) matters little.
			full := size == 50<<20
			tt, tl := target(full, "≤ 200 MB (4× the prompt)", 200)
			peakR := b.result(ag, g, "peak RSS (VmHWM) at agent_end", "MB", tt, tl)
			tt, tl = target(full, "≤ 4", 4)
			ratioR := b.result(ag, g, "peak RSS / prompt size", "ratio", tt, tl)
			overR := b.result(ag, g, "(peak RSS − idle RSS) / prompt size", "ratio", "", 0)
			cpuR := b.result(ag, g, "agent CPU, prompt written → agent_end", "ms", "", 0)
			return func(record bool) error {
				a, err := b.startReady(ag, b.workDir, append([]string{"--model", "mock/mock-model"}, v.args...)...)
				if err != nil {
					return err
				}
				idle, _, _ := a.Memory()
				from := a.Mark()
				cpu0, _ := a.CPU()
				id, t0, err := a.Send(map[string]any{"type": "prompt", "message": msg})
				if err != nil {
					a.Kill()
					return err
				}
				resp, err := a.WaitResponse(from, id)
				if err == nil && !resp.Success {
					err = errors.New("prompt failed: " + resp.Error)
				}
				if err != nil {
					a.Kill()
					return err
				}
				_, end, err := a.WaitEvent(from, "agent_end")
				if err != nil {
					a.Kill()
					return err
				}
				cpu1, _ := a.CPU()
				_, hwm, _ := a.Memory()
				if _, err := closeAgent(a); err != nil {
					return err
				}
				if record {
					cpuR.Runs = append(cpuR.Runs, ms(cpu1-cpu0))
					respR.Runs = append(respR.Runs, ms(resp.T.Sub(t0)))
					endR.Runs = append(endR.Runs, ms(end.T.Sub(t0)))
					peakR.Runs = append(peakR.Runs, mb(hwm))
					ratioR.Runs = append(ratioR.Runs, float64(hwm)/float64(size))
					overR.Runs = append(overR.Runs, float64(hwm-idle)/float64(size))
				}
				return nil
			}
		})
	}
	return nil
}
