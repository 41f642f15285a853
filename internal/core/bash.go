package core

import (
	"context"
	"errors"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

type bashState struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// BashResult is the answer to the RPC bash command.
type BashResult = tools.UserBashResult

// ErrBashRunning is returned when a user bash command is already running.
var ErrBashRunning = errors.New("A bash command is already running")

// RunBash runs a user shell command (the RPC bash command), streaming its
// output as bash_execution_update events tagged with id. The result is
// recorded as a bashExecution message; while a run is going on the record is
// deferred until the next prompt, as pi does.
func (s *Session) RunBash(id, command string, excludeFromContext bool) (BashResult, error) {
	ctx, cancel := context.WithCancel(context.Background())
	st := &bashState{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	if s.bash != nil {
		s.mu.Unlock()
		cancel()
		return BashResult{}, ErrBashRunning
	}
	s.bash = st
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.bash = nil
		s.mu.Unlock()
		cancel()
		close(st.done)
	}()
	env := tools.Env{
		Cwd:                s.Cwd(),
		ShellPath:          s.opts.Settings.ShellPath(),
		ShellCommandPrefix: s.opts.Settings.ShellCommandPrefix(),
		AgentDir:           s.opts.AgentDir,
		Spills:             s.opts.Spills,
	}
	res := tools.RunUserBash(ctx, env, command, func(delta string) {
		s.emit(&rpc.BashExecutionUpdateEvent{ID: id, Delta: delta})
		s.pace(ctx)
	})
	if res.Err != nil {
		return res, res.Err
	}
	msg := &ai.BashExecutionMessage{
		Role: ai.RoleBashExecution, Command: command, Output: res.Output,
		ExitCode: res.ExitCode, Cancelled: res.Cancelled, Truncated: res.Truncated,
		FullOutputPath: res.FullOutputPath, Timestamp: ai.NowMs(),
		ExcludeFromContext: excludeFromContext,
	}
	s.mu.Lock()
	if s.run != nil {
		s.pendingBash = append(s.pendingBash, msg)
		s.mu.Unlock()
	} else {
		s.mu.Unlock()
		s.persist(msg)
	}
	return res, nil
}

// AbortBash cancels the running user bash command, if any.
func (s *Session) AbortBash() {
	s.mu.Lock()
	b := s.bash
	s.mu.Unlock()
	if b != nil {
		b.cancel()
		<-b.done
	}
}
