package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/tools"
)

// terminalOutputLimit bounds the output the editor keeps for a command
// (it drops the start past it); bash shows the model the end of it, as it
// does with its own commands.
const terminalOutputLimit = 1 << 20

// terminalGrace bounds the waits for the editor after a command was
// killed or has ended (its exit, its output, the release).
const terminalGrace = 10 * time.Second

// EditorTerminals runs the bash commands of the session sessionID in the
// editor's terminals when the client advertised terminal (nil: bash runs
// them itself): terminal/create, the terminal shown as the tool call's
// content, terminal/wait_for_exit, terminal/output for the model, then
// terminal/release; an abort or bash's timeout is terminal/kill.
func (s *Server) EditorTerminals(sessionID string) tools.CommandRunner {
	if !s.clientCaps().Terminal {
		return nil
	}
	return terminals{s: s, sessionID: sessionID}
}

type terminals struct {
	s         *Server
	sessionID string
}

func (t terminals) RunCommand(ctx context.Context, callID string, c tools.RemoteCommand) (string, int, error) {
	as := t.s.session(t.sessionID)
	if as == nil {
		return "", 0, errors.New("the session is closed")
	}
	conn := t.s.conn
	sid := sdk.SessionId(t.sessionID)
	env := make([]sdk.EnvVariable, 0, len(c.Env))
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, sdk.EnvVariable{Name: k, Value: v})
	}
	created, err := conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{
		SessionId: sid, Command: c.Shell, Args: c.Args, Cwd: sdk.Ptr(c.Cwd), Env: env,
		OutputByteLimit: sdk.Ptr(terminalOutputLimit),
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", -1, nil
		}
		return "", 0, fmt.Errorf("the editor could not run the command: %v", err)
	}
	id := created.TerminalId
	as.mu.Lock()
	as.terminals[callID] = id
	as.mu.Unlock()
	// The editor shows the command's output as it runs.
	as.send(sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(id)})))

	// The requests below do not end with ctx: an aborted command is
	// killed, its end still waited for and its terminal released (each
	// bounded by terminalGrace once the command has ended or was killed;
	// they fail at once when the editor is gone).
	type exit struct {
		resp sdk.WaitForTerminalExitResponse
		err  error
	}
	exited := make(chan exit, 1)
	wctx, stopWait := context.WithCancel(context.Background())
	defer stopWait()
	go func() {
		r, err := conn.WaitForTerminalExit(wctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: id})
		exited <- exit{r, err}
	}()
	bounded := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), terminalGrace)
	}
	defer func() {
		rctx, cancel := bounded()
		defer cancel()
		_, _ = conn.ReleaseTerminal(rctx, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: id})
	}()
	var e exit
	select {
	case e = <-exited:
	case <-ctx.Done():
		kctx, cancel := bounded()
		_, _ = conn.KillTerminal(kctx, sdk.KillTerminalRequest{SessionId: sid, TerminalId: id})
		cancel()
		select {
		case e = <-exited:
		case <-time.After(terminalGrace):
			e.err = errors.New("the editor did not report the killed command's end")
		}
	}
	octx, cancel := bounded()
	out, oerr := conn.TerminalOutput(octx, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: id})
	cancel()
	if e.err != nil && ctx.Err() == nil {
		return out.Output, 0, fmt.Errorf("the editor's terminal failed: %v", e.err)
	}
	if oerr != nil && ctx.Err() == nil {
		return "", 0, fmt.Errorf("the editor did not give the command's output: %v", oerr)
	}
	code := -1
	if e.resp.ExitCode != nil {
		code = *e.resp.ExitCode
	}
	if out.ExitStatus != nil && out.ExitStatus.ExitCode != nil && e.resp.ExitCode == nil {
		code = *out.ExitStatus.ExitCode
	}
	output := out.Output
	if out.Truncated {
		output = fmt.Sprintf("[the editor kept only the last %d bytes of the output]\n", terminalOutputLimit) + output
	}
	return output, code, nil
}
