package core

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pisces-agent/pisces/internal/extensions"
	"github.com/pisces-agent/pisces/internal/resources"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// ErrCommandWhileQueued refuses an extension command sent with steer or
// follow_up (it runs at once with prompt).
var ErrCommandWhileQueued = errors.New("Extension commands cannot be queued: send them with prompt")

// hooks returns the extension hooks (a nil *extensions.Host does nothing).
func (s *Session) hooks() extensions.Hooks {
	if s.opts.Extensions == nil {
		return (*extensions.Host)(nil)
	}
	return s.opts.Extensions
}

// extensionCommand splits "/name args" when name is an extension command.
func (s *Session) extensionCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(text[1:], " ")
	for _, c := range s.hooks().Commands() {
		if c.Name == name {
			return name, strings.TrimSpace(args), true
		}
	}
	return "", "", false
}

// hookedTool runs the tool_call and tool_result hooks around a tool.
type hookedTool struct {
	tools.Tool
	hooks extensions.Hooks
}

func (h hookedTool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	d := h.hooks.OnToolCall(ctx, call.ID, h.Name(), call.Args)
	if d.Block {
		reason := d.Reason
		if reason == "" {
			reason = "Blocked by an extension"
		}
		return tools.ErrorResult(reason), nil
	}
	if d.Args != nil {
		call.Args = d.Args
	}
	res, err := h.Tool.Execute(ctx, call)
	if err != nil {
		return res, err
	}
	if r, ok := h.hooks.OnToolResult(ctx, call.ID, h.Name(), call.Args, res); ok {
		return r, nil
	}
	return res, nil
}

// withHooks wraps tools with the extension hooks when extensions are loaded.
func (s *Session) withHooks(ts []tools.Tool) []tools.Tool {
	if s.opts.Extensions == nil {
		return ts
	}
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = hookedTool{Tool: t, hooks: s.opts.Extensions}
	}
	return out
}

// extensionTools are the tools extensions registered, not shadowing a
// built-in one.
func (s *Session) extensionTools(have []tools.Tool) []tools.Tool {
	var out []tools.Tool
	for _, t := range s.hooks().Tools() {
		clash := false
		for _, h := range have {
			if h.Name() == t.Name() {
				clash = true
				s.logf("extension tool %s ignored: a built-in tool has that name", t.Name())
			}
		}
		if !clash {
			out = append(out, t)
		}
	}
	return out
}

// sessionBefore asks the extensions whether a session action may go on.
func (s *Session) sessionBefore(kind string, payload any) bool {
	return !s.hooks().SessionBefore(context.Background(), kind, payload)
}

// extensionCommands lists extension commands for get_commands.
func (s *Session) extensionCommands() []resources.CommandInfo {
	var out []resources.CommandInfo
	for _, c := range s.hooks().Commands() {
		out = append(out, resources.NewCommandInfo(c.Name, c.Description, resources.SourceExtension, c.ExtensionPath, resources.ScopeUser, ""))
	}
	return out
}

// Actions returns what extensions may ask of this session.
func (s *Session) Actions() extensions.Actions { return sessionActions{s} }

type sessionActions struct{ s *Session }

func (a sessionActions) SendMessage(text, deliverAs string) error {
	s := a.s
	if !s.IsStreaming() {
		// Started in the background: the extension's reply must not wait
		// for the hooks of the run it starts.
		go func() {
			if _, err := s.Prompt(text, nil, ""); err != nil {
				s.logf("extension message: %v", err)
			}
		}()
		return nil
	}
	var err error
	if deliverAs == BehaviorFollowUp {
		_, err = s.FollowUp(text, nil)
	} else {
		_, err = s.Steer(text, nil)
	}
	return err
}

func (a sessionActions) AppendCustomEntry(customType string, data json.RawMessage) error {
	e, err := a.s.Store().AppendCustom(customType, data)
	if err != nil {
		return err
	}
	a.s.emit(&rpc.EntryAppendedEvent{Entry: json.RawMessage(e.Raw)})
	return nil
}

func (a sessionActions) SetSessionName(name string) error { return a.s.SetSessionName(name) }

func (a sessionActions) Shutdown() { a.s.requestShutdown() }

// requestShutdown asks the process to exit 0 once idle (the transport
// watches ShutdownRequested).
func (s *Session) requestShutdown() {
	s.shutdownOnce.Do(func() { close(s.shutdown) })
}

// ShutdownRequested is closed when an extension asked Pisces to shut down.
func (s *Session) ShutdownRequested() <-chan struct{} { return s.shutdown }

// EmitExternal publishes an event produced outside the core (extension
// errors).
func (s *Session) EmitExternal(ev rpc.Event) { s.emit(ev) }
