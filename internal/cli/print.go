package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/internal/settings"
	"github.com/pisces-agent/pisces/rpc"
)

// runPrint runs text mode (-p: print the final answer) and json mode (every
// event as one JSON line), both over the same core as RPC mode.
func runPrint(sess *core.Session, a *Args, stdio IO) int {
	msgs := append([]string(nil), a.Messages...)
	piped := ""
	if !stdio.StdinIsTTY && stdio.Stdin != nil {
		b, err := io.ReadAll(stdio.Stdin)
		if err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces: reading stdin: %v\n", err)
			return 1
		}
		piped = strings.TrimSpace(string(b))
	}
	fileText, images, err := fileArguments(a.FileArgs, sess.Cwd())
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
		return 1
	}
	first := ""
	if len(msgs) > 0 {
		first, msgs = msgs[0], msgs[1:]
	}
	if m := initialMessage(piped, fileText, first); m != "" || len(images) > 0 {
		msgs = append([]string{m}, msgs...)
	}
	if len(msgs) == 0 {
		fmt.Fprintln(stdio.Stderr, "pisces: no message given (pass a message, pipe one on stdin, or use --mode rpc)")
		return 2
	}
	out := bufio.NewWriter(stdio.Stdout)
	defer out.Flush()
	var mu sync.Mutex
	var werr error
	if a.Mode == "json" {
		// The session header comes first, as in pi (with --no-session too:
		// the header of the in-memory session).
		out.Write(sess.Store().Header().Raw)
		out.WriteByte('\n')
		unsub := sess.Subscribe(func(ev rpc.Event) {
			if _, ok := ev.(*rpc.NoticeEvent); ok {
				return // oh-my-pi's wire only; pi's json mode has none
			}
			b, err := rpc.EncodeEvent(ev)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fmt.Fprintf(stdio.Stderr, "pisces: cannot encode %s event: %v\n", ev.EventType(), err)
				return
			}
			if werr == nil {
				out.Write(b)
				out.WriteByte('\n')
				if ev.EventType() == rpc.EventAgentSettled || ev.EventType() == rpc.EventMessageEnd {
					werr = out.Flush()
				}
			}
		})
		sess.StartMCPReports()
		defer unsub()
	}
	if a.Mode != "json" {
		// Text mode shows retries as they happen: the wait would otherwise
		// be silent.
		unsub := sess.Subscribe(func(ev rpc.Event) {
			if e, ok := ev.(*rpc.AutoRetryStartEvent); ok {
				fmt.Fprintf(stdio.Stderr, "pisces: retrying in %s (%d/%d): %s\n",
					retryDelayText(e.DelayMs), e.Attempt, e.MaxAttempts, e.ErrorMessage)
			}
		})
		sess.StartMCPReports()
		defer unsub()
	}
	ctx, sig, stop := signalContext()
	defer stop()
	go func() {
		<-ctx.Done()
		sess.Abort()
	}()
	for i, m := range msgs {
		var attach []ai.Content
		if i == 0 {
			attach = images
		}
		if _, err := sess.Prompt(m, attach, ""); err != nil {
			if errors.Is(err, core.ErrNoModel) {
				err = errors.New(noModelSelected(sess.Models(), sess.Settings().Path(settings.Global)))
			}
			fmt.Fprintf(stdio.Stderr, "pisces: %v\n", err)
			return 1
		}
		sess.WaitIdle()
		if s := sig(); s != nil {
			return exitCodeFor(s)
		}
	}
	last := lastAssistant(sess.Messages())
	if a.Mode != "json" {
		if last != nil {
			if t := strings.TrimSpace(ai.JoinText(last.Content, "")); t != "" {
				fmt.Fprintln(out, t)
			}
		}
	}
	if last != nil && last.StopReason == ai.StopError {
		out.Flush()
		fmt.Fprintf(stdio.Stderr, "pisces: %s\n", last.ErrorMessage)
		return 1
	}
	return 0
}

// retryDelayText writes a retry delay as "2s", "1.5s" or "500ms".
func retryDelayText(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= time.Second {
		d = d.Round(100 * time.Millisecond)
	}
	return d.String()
}

// noModelSelected says how to pick a model, and which providers have a key.
func noModelSelected(r *models.Registry, settingsFile string) string {
	var keyed, vars []string
	for _, name := range r.Providers() {
		if p, ok := r.Provider(name); !ok || p.NoKey {
			continue
		}
		if _, ok := r.Key(name); ok {
			keyed = append(keyed, name)
		} else if v := r.KeyVariable(name); v != "" {
			vars = append(vars, v)
		}
	}
	msg := "No model selected. Pick one with --model provider/id (pisces --list-models lists the models you have keys for),\n" +
		"or set \"defaultProvider\" and \"defaultModel\" in " + models.HomeRelative(settingsFile) + ".\n"
	if len(keyed) > 0 {
		return msg + "Providers with a key: " + strings.Join(keyed, ", ") + "."
	}
	msg += "No provider has a key yet: set one of " + strings.Join(vars, ", ")
	if f := r.AuthFile(); f != "" {
		msg += "\nor add one to " + f
	}
	msg += ",\nor log in to a subscription: pisces auth login (Claude Pro/Max, ChatGPT Plus/Pro, GitHub Copilot)"
	return msg + ".\nA local server needs no key: --provider ollama --model NAME (also lmstudio, vllm, llama.cpp)."
}

func lastAssistant(msgs []ai.Message) *ai.AssistantMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if a, ok := msgs[i].(*ai.AssistantMessage); ok {
			return a
		}
	}
	return nil
}
