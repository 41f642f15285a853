package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pisces-agent/pisces/rpc"
)

// do sends a command struct whose ID is set by the caller.
func (c *Client) do(ctx context.Context, typ, id string, cmd any) (*rpc.Response, error) {
	b, err := rpc.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	return c.roundTrip(ctx, typ, id, b)
}

// data decodes a success response's data into a new T; nil when the data
// is null or absent.
func data[T any](resp *rpc.Response, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if len(resp.Data) == 0 || string(resp.Data) == "null" {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal(resp.Data, v); err != nil {
		return nil, fmt.Errorf("pisces rpc: %s: decoding data: %w", resp.Command, err)
	}
	return v, nil
}

func noData(_ *rpc.Response, err error) error { return err }

func (c *Client) simple(ctx context.Context, typ string) (*rpc.Response, error) {
	id := c.newID()
	return c.do(ctx, typ, id, rpc.SimpleCommand{ID: id, Type: typ})
}

func (c *Client) message(ctx context.Context, typ, message string, images []rpc.ImageInput) (*rpc.PromptData, error) {
	id := c.newID()
	return data[rpc.PromptData](c.do(ctx, typ, id, rpc.MessageCommand{ID: id, Type: typ, Message: message, Images: images}))
}

func (c *Client) mode(ctx context.Context, typ, mode string) error {
	id := c.newID()
	return noData(c.do(ctx, typ, id, rpc.SetModeCommand{ID: id, Type: typ, Mode: mode}))
}

func (c *Client) enabled(ctx context.Context, typ string, on bool) error {
	id := c.newID()
	return noData(c.do(ctx, typ, id, rpc.SetEnabledCommand{ID: id, Type: typ, Enabled: on}))
}

// Prompt starts a run with message (the response comes after the
// preflight; data.disposition says whether the run started, the message was
// queued or it was handled). Events of the run arrive on Events(); see
// PromptAndWait to collect them.
func (c *Client) Prompt(ctx context.Context, message string, images ...rpc.ImageInput) (*rpc.PromptData, error) {
	return c.SendPrompt(ctx, rpc.PromptCommand{Message: message, Images: images})
}

// SendPrompt sends a prompt command with every field under the caller's
// control (streamingBehavior "steer" or "followUp" queues the message while
// a run is streaming). Type and ID are filled in.
func (c *Client) SendPrompt(ctx context.Context, cmd rpc.PromptCommand) (*rpc.PromptData, error) {
	cmd.Type = rpc.CmdPrompt
	if cmd.ID == "" {
		cmd.ID = c.newID()
	}
	return data[rpc.PromptData](c.do(ctx, cmd.Type, cmd.ID, cmd))
}

// Steer queues a steering message for the running turn.
func (c *Client) Steer(ctx context.Context, message string, images ...rpc.ImageInput) (*rpc.PromptData, error) {
	return c.message(ctx, rpc.CmdSteer, message, images)
}

// FollowUp queues a message for when the run has finished.
func (c *Client) FollowUp(ctx context.Context, message string, images ...rpc.ImageInput) (*rpc.PromptData, error) {
	return c.message(ctx, rpc.CmdFollowUp, message, images)
}

// Abort aborts the running work; it returns once the run has stopped.
func (c *Client) Abort(ctx context.Context) error {
	return noData(c.simple(ctx, rpc.CmdAbort))
}

// AbortAndPrompt aborts the running work and then prompts, atomically.
func (c *Client) AbortAndPrompt(ctx context.Context, message string, images ...rpc.ImageInput) (*rpc.PromptData, error) {
	return c.message(ctx, rpc.CmdAbortAndPrompt, message, images)
}

// ClearQueue empties both queues and returns what was removed.
func (c *Client) ClearQueue(ctx context.Context) (*rpc.ClearQueueData, error) {
	return data[rpc.ClearQueueData](c.simple(ctx, rpc.CmdClearQueue))
}

// NewSession starts a new session (parentSession may be "").
func (c *Client) NewSession(ctx context.Context, parentSession string) (*rpc.CancelledData, error) {
	id := c.newID()
	return data[rpc.CancelledData](c.do(ctx, rpc.CmdNewSession, id, rpc.NewSessionCommand{ID: id, Type: rpc.CmdNewSession, ParentSession: parentSession}))
}

// NewSessionIn starts a new session in the directory cwd (absolute, ~, or
// relative to the current session's directory), with that project's
// resources under its trust decision.
func (c *Client) NewSessionIn(ctx context.Context, cwd, parentSession string) (*rpc.CancelledData, error) {
	id := c.newID()
	return data[rpc.CancelledData](c.do(ctx, rpc.CmdNewSession, id, rpc.NewSessionCommand{ID: id, Type: rpc.CmdNewSession, ParentSession: parentSession, Cwd: cwd}))
}

// ListDirectory lists the directories in path ("" is the home directory;
// dotfiles are left out), sorted by name.
func (c *Client) ListDirectory(ctx context.Context, path string) (*rpc.ListDirectoryData, error) {
	id := c.newID()
	return data[rpc.ListDirectoryData](c.do(ctx, rpc.CmdListDirectory, id, rpc.ListDirectoryCommand{ID: id, Type: rpc.CmdListDirectory, Path: path}))
}

// ExportHTML writes the current branch as one self-contained HTML file to
// outputPath ("" is beside the session file) and returns its path.
func (c *Client) ExportHTML(ctx context.Context, outputPath string) (string, error) {
	id := c.newID()
	d, err := data[rpc.ExportHTMLData](c.do(ctx, rpc.CmdExportHTML, id, rpc.ExportHTMLCommand{ID: id, Type: rpc.CmdExportHTML, OutputPath: outputPath}))
	if err != nil {
		return "", err
	}
	return d.Path, nil
}

// ExportHTMLInline returns the page ExportHTML would write, and the file
// name it would have, without writing anything on the agent's machine.
func (c *Client) ExportHTMLInline(ctx context.Context) (html, fileName string, err error) {
	id := c.newID()
	d, err := data[rpc.ExportHTMLData](c.do(ctx, rpc.CmdExportHTML, id, rpc.ExportHTMLCommand{ID: id, Type: rpc.CmdExportHTML, Inline: true}))
	if err != nil {
		return "", "", err
	}
	return d.HTML, d.FileName, nil
}

// GetTools returns every tool, the active ones' names and the MCP
// servers.
func (c *Client) GetTools(ctx context.Context) (*rpc.ToolsData, error) {
	return data[rpc.ToolsData](c.simple(ctx, rpc.CmdGetTools))
}

// SetActiveTools activates exactly the named tools (MCP tools included).
func (c *Client) SetActiveTools(ctx context.Context, names []string) (*rpc.ActiveToolsData, error) {
	id := c.newID()
	return data[rpc.ActiveToolsData](c.do(ctx, rpc.CmdSetActiveTools, id, rpc.SetActiveToolsCommand{ID: id, Type: rpc.CmdSetActiveTools, ToolNames: names}))
}

// MCPStatus returns the MCP servers' states.
func (c *Client) MCPStatus(ctx context.Context) (*rpc.MCPStatusData, error) {
	return data[rpc.MCPStatusData](c.simple(ctx, rpc.CmdMCPStatus))
}

// GetState reports the session state.
func (c *Client) GetState(ctx context.Context) (*rpc.SessionState, error) {
	return data[rpc.SessionState](c.simple(ctx, rpc.CmdGetState))
}

// GetMessages returns the messages of the current branch, decoded by role.
func (c *Client) GetMessages(ctx context.Context) (*rpc.MessagesData, error) {
	return data[rpc.MessagesData](c.simple(ctx, rpc.CmdGetMessages))
}

// SetModel selects a model and returns it.
func (c *Client) SetModel(ctx context.Context, provider, modelID string) (*rpc.Model, error) {
	id := c.newID()
	return data[rpc.Model](c.do(ctx, rpc.CmdSetModel, id, rpc.SetModelCommand{ID: id, Type: rpc.CmdSetModel, Provider: provider, ModelID: modelID}))
}

// CycleModel switches to the next model; nil when there is nothing to cycle.
func (c *Client) CycleModel(ctx context.Context) (*rpc.CycleModelData, error) {
	return data[rpc.CycleModelData](c.simple(ctx, rpc.CmdCycleModel))
}

// GetAvailableModels lists the models that can be used.
func (c *Client) GetAvailableModels(ctx context.Context) (*rpc.ModelsData, error) {
	return data[rpc.ModelsData](c.simple(ctx, rpc.CmdGetAvailableModels))
}

// SetThinkingLevel sets the thinking level (off, minimal, low, medium,
// high, xhigh, max).
func (c *Client) SetThinkingLevel(ctx context.Context, level string) error {
	id := c.newID()
	return noData(c.do(ctx, rpc.CmdSetThinkingLevel, id, rpc.SetThinkingLevelCommand{ID: id, Type: rpc.CmdSetThinkingLevel, Level: level}))
}

// CycleThinkingLevel switches to the next thinking level; nil when the
// model has none.
func (c *Client) CycleThinkingLevel(ctx context.Context) (*rpc.LevelData, error) {
	return data[rpc.LevelData](c.simple(ctx, rpc.CmdCycleThinkingLevel))
}

// GetAvailableThinkingLevels lists the thinking levels of the current model.
func (c *Client) GetAvailableThinkingLevels(ctx context.Context) (*rpc.LevelsData, error) {
	return data[rpc.LevelsData](c.simple(ctx, rpc.CmdGetAvailableThinkingLevels))
}

// SetSteeringMode sets how steering messages are delivered ("all" or
// "one-at-a-time").
func (c *Client) SetSteeringMode(ctx context.Context, mode string) error {
	return c.mode(ctx, rpc.CmdSetSteeringMode, mode)
}

// SetFollowUpMode sets how follow-up messages are delivered ("all" or
// "one-at-a-time").
func (c *Client) SetFollowUpMode(ctx context.Context, mode string) error {
	return c.mode(ctx, rpc.CmdSetFollowUpMode, mode)
}

// SetInterruptMode sets when steering interrupts a turn ("immediate" or
// "wait").
func (c *Client) SetInterruptMode(ctx context.Context, mode string) error {
	return c.mode(ctx, rpc.CmdSetInterruptMode, mode)
}

// SetAutoCompaction turns automatic compaction on or off.
func (c *Client) SetAutoCompaction(ctx context.Context, enabled bool) error {
	return c.enabled(ctx, rpc.CmdSetAutoCompaction, enabled)
}

// SetAutoRetry turns automatic retries of failed model calls on or off.
func (c *Client) SetAutoRetry(ctx context.Context, enabled bool) error {
	return c.enabled(ctx, rpc.CmdSetAutoRetry, enabled)
}

// AbortRetry cancels a pending automatic retry.
func (c *Client) AbortRetry(ctx context.Context) error {
	return noData(c.simple(ctx, rpc.CmdAbortRetry))
}

// Bash runs a user shell command (its output also streams as
// bash_execution_update events). With excludeFromContext the result is not
// shown to the model.
func (c *Client) Bash(ctx context.Context, command string, excludeFromContext bool) (*rpc.BashData, error) {
	id := c.newID()
	return data[rpc.BashData](c.do(ctx, rpc.CmdBash, id, rpc.BashCommand{ID: id, Type: rpc.CmdBash, Command: command, ExcludeFromContext: excludeFromContext}))
}

// AbortBash aborts the running bash command.
func (c *Client) AbortBash(ctx context.Context) error {
	return noData(c.simple(ctx, rpc.CmdAbortBash))
}

// GetSessionStats reports message and token counts.
func (c *Client) GetSessionStats(ctx context.Context) (*rpc.SessionStats, error) {
	return data[rpc.SessionStats](c.simple(ctx, rpc.CmdGetSessionStats))
}

// SwitchSession opens another session file.
func (c *Client) SwitchSession(ctx context.Context, sessionPath string) (*rpc.CancelledData, error) {
	id := c.newID()
	return data[rpc.CancelledData](c.do(ctx, rpc.CmdSwitchSession, id, rpc.SwitchSessionCommand{ID: id, Type: rpc.CmdSwitchSession, SessionPath: sessionPath}))
}

// Fork forks the session before the user message entryID; data.text is
// that message's text.
func (c *Client) Fork(ctx context.Context, entryID string) (*rpc.ForkData, error) {
	id := c.newID()
	return data[rpc.ForkData](c.do(ctx, rpc.CmdFork, id, rpc.ForkCommand{ID: id, Type: rpc.CmdFork, EntryID: entryID}))
}

// Clone copies the current branch into a new session.
func (c *Client) Clone(ctx context.Context) (*rpc.CancelledData, error) {
	return data[rpc.CancelledData](c.simple(ctx, rpc.CmdClone))
}

// GetForkMessages lists the user messages Fork accepts.
func (c *Client) GetForkMessages(ctx context.Context) (*rpc.ForkMessagesData, error) {
	return data[rpc.ForkMessagesData](c.simple(ctx, rpc.CmdGetForkMessages))
}

// GetEntries returns the raw session entries after the entry since (all
// of them when since is "").
func (c *Client) GetEntries(ctx context.Context, since string) (*rpc.EntriesData, error) {
	id := c.newID()
	return data[rpc.EntriesData](c.do(ctx, rpc.CmdGetEntries, id, rpc.GetEntriesCommand{ID: id, Type: rpc.CmdGetEntries, Since: since}))
}

// GetTree returns the session tree.
func (c *Client) GetTree(ctx context.Context) (*rpc.TreeData, error) {
	return data[rpc.TreeData](c.simple(ctx, rpc.CmdGetTree))
}

// GetLastAssistantText returns the text of the last assistant message
// (Text is nil when there is none).
func (c *Client) GetLastAssistantText(ctx context.Context) (*rpc.TextData, error) {
	return data[rpc.TextData](c.simple(ctx, rpc.CmdGetLastAssistantText))
}

// SetSessionName names the session.
func (c *Client) SetSessionName(ctx context.Context, name string) error {
	id := c.newID()
	return noData(c.do(ctx, rpc.CmdSetSessionName, id, rpc.SetSessionNameCommand{ID: id, Type: rpc.CmdSetSessionName, Name: name}))
}

// PromptAndWait sends a prompt and collects every event from the moment it
// is sent until the next agent_settled (included), or on oh-my-pi's wire
// (after NegotiateProtocol) until the prompt's own prompt_result
// (included). When the prompt is handled without a run (an extension
// command), it returns at once (on oh-my-pi's wire with that prompt_result).
// On
// error (a failed prompt, ctx done, the connection ending) it returns the
// events collected so far with the error. The default timeout (WithTimeout)
// bounds the whole run when ctx has no deadline. The events are also
// delivered on Events().
func (c *Client) PromptAndWait(ctx context.Context, message string, images ...rpc.ImageInput) ([]Event, error) {
	if _, ok := ctx.Deadline(); !ok && c.opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.timeout)
		defer cancel()
	}
	sub := c.subscribe()
	defer c.unsubscribe(sub)
	id := c.newID()
	d, err := c.SendPrompt(ctx, rpc.PromptCommand{ID: id, Message: message, Images: images})
	if err != nil {
		evs, _ := sub.since(0)
		return evs, err
	}
	if d != nil && (d.Disposition == "handled" || (d.AgentInvoked != nil && !*d.AgentInvoked)) {
		evs, _ := sub.since(0)
		return evs, nil
	}
	if c.omp.Load() {
		return c.waitPromptResult(ctx, sub, id)
	}
	// A started run is answered before its agent_start: an agent_settled
	// seen before that belongs to earlier work.
	started := d == nil || d.Disposition != "started"
	var out []Event
	for {
		evs, closed := sub.since(len(out))
		for _, ev := range evs {
			out = append(out, ev)
			switch ev.Type {
			case rpc.EventAgentStart:
				started = true
			case rpc.EventAgentSettled:
				if started {
					return out, nil
				}
			}
		}
		if closed {
			return out, fmt.Errorf("pisces rpc: waiting for agent_settled: %w", c.closedErr())
		}
		select {
		case <-sub.notify:
		case <-ctx.Done():
			// Everything received before the deadline is returned, even
			// what arrived while ctx ended.
			evs, _ := sub.since(len(out))
			return append(out, evs...), fmt.Errorf("pisces rpc: waiting for agent_settled: %w", ctx.Err())
		}
	}
}

// waitPromptResult collects events until the prompt_result of prompt id
// (oh-my-pi's wire), which is the last event returned.
func (c *Client) waitPromptResult(ctx context.Context, sub *subscriber, id string) ([]Event, error) {
	var out []Event
	for {
		evs, closed := sub.since(len(out))
		for _, ev := range evs {
			out = append(out, ev)
			if ev.Type == rpc.EventPromptResult {
				var r rpc.PromptResultEvent
				if json.Unmarshal(ev.Raw, &r) == nil && r.ID == id {
					// A prompt that could not start (its second, failed
					// response came just before) is an error; a run that
					// failed is not (its messages say so).
					if !r.AgentInvoked && r.Status == rpc.PromptError && r.Error != nil {
						return out, fmt.Errorf("pisces rpc: prompt failed: %s", r.Error.Message)
					}
					return out, nil
				}
			}
		}
		if closed {
			return out, fmt.Errorf("pisces rpc: waiting for prompt_result: %w", c.closedErr())
		}
		select {
		case <-sub.notify:
		case <-ctx.Done():
			evs, _ := sub.since(len(out))
			return append(out, evs...), fmt.Errorf("pisces rpc: waiting for prompt_result: %w", ctx.Err())
		}
	}
}
