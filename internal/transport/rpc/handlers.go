package rpcmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/browse"
	"github.com/pisces-agent/pisces/internal/core"
	"github.com/pisces-agent/pisces/internal/fsx"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/rpc"
)

// handler runs one command and returns its data (nil: no data member).
type handler func(s *call, line []byte) (any, error)

// jsonNull is data that is literally null.
var jsonNull = json.RawMessage("null")

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		rpc.CmdPrompt:             (*call).prompt,
		rpc.CmdSteer:              (*call).steer,
		rpc.CmdQueueMessage:       (*call).steer,
		rpc.CmdFollowUp:           (*call).followUp,
		rpc.CmdAbort:              (*call).abort,
		rpc.CmdAbortAndPrompt:     (*call).abortAndPrompt,
		rpc.CmdClearQueue:         (*call).clearQueue,
		rpc.CmdNewSession:         (*call).newSession,
		rpc.CmdGetState:           (*call).getState,
		rpc.CmdGetMessages:        (*call).getMessages,
		rpc.CmdSetModel:           (*call).setModel,
		rpc.CmdCycleModel:         (*call).cycleModel,
		rpc.CmdGetAvailableModels: (*call).availableModels,
		rpc.CmdSetThinkingLevel:   (*call).setThinkingLevel,
		rpc.CmdCycleThinkingLevel: (*call).cycleThinkingLevel,
		rpc.CmdGetAvailableThinkingLevels: func(s *call, _ []byte) (any, error) {
			return rpc.LevelsData{Levels: s.sess.AvailableThinkingLevels()}, nil
		},
		rpc.CmdSetSteeringMode:      (*call).setMode,
		rpc.CmdSetQueueMode:         (*call).setMode,
		rpc.CmdSetFollowUpMode:      (*call).setMode,
		rpc.CmdSetInterruptMode:     (*call).setMode,
		rpc.CmdSetAutoCompaction:    (*call).setEnabled,
		rpc.CmdSetAutoRetry:         (*call).setEnabled,
		rpc.CmdAbortRetry:           func(s *call, _ []byte) (any, error) { s.sess.AbortRetry(); return nil, nil },
		rpc.CmdBash:                 (*call).bash,
		rpc.CmdAbortBash:            func(s *call, _ []byte) (any, error) { s.sess.AbortBash(); return nil, nil },
		rpc.CmdGetSessionStats:      (*call).stats,
		rpc.CmdSwitchSession:        (*call).switchSession,
		rpc.CmdFork:                 (*call).fork,
		rpc.CmdBranch:               (*call).fork,
		rpc.CmdClone:                (*call).clone,
		rpc.CmdGetForkMessages:      (*call).forkMessages,
		rpc.CmdGetBranchMessages:    (*call).forkMessages,
		rpc.CmdGetEntries:           (*call).entries,
		rpc.CmdGetTree:              (*call).tree,
		rpc.CmdGetLastAssistantText: (*call).lastAssistantText,
		rpc.CmdSetSessionName:       (*call).setSessionName,
	}
	handlers[rpc.CmdCompact] = (*call).compact
	handlers[rpc.CmdGetContextUsage] = (*call).contextUsage
	handlers[rpc.CmdNavigateTree] = (*call).navigateTree
	handlers[rpc.CmdSetLabel] = (*call).setLabel
	handlers[rpc.CmdSetEntryLabel] = (*call).setLabel
	handlers[rpc.CmdAbortBranchSummary] = (*call).abortBranchSummary
	handlers[rpc.CmdGetTools] = (*call).getTools
	handlers[rpc.CmdMCPStatus] = (*call).mcpStatus
	handlers[rpc.CmdSetActiveTools] = (*call).setActiveTools
	handlers[rpc.CmdSetTodos] = (*call).setTodos
	handlers[rpc.CmdSetHostTools] = (*call).setHostTools
	handlers[rpc.CmdGetCommands] = func(s *call, _ []byte) (any, error) {
		return rpc.CommandsData{Commands: s.sess.Commands()}, nil
	}
	handlers[rpc.CmdReloadResources] = func(s *call, _ []byte) (any, error) {
		d := rpc.CommandsData{Commands: s.sess.ReloadResources()}
		s.commandsUpdate()
		return d, nil
	}
	handlers[rpc.CmdGetSessionTree] = (*call).sessionTree
	handlers[rpc.CmdListSessions] = (*call).listSessions
	handlers[rpc.CmdRenameSession] = (*call).renameSession
	handlers[rpc.CmdDeleteSession] = (*call).deleteSession
	handlers[rpc.CmdExportHTML] = (*call).exportHTML
	handlers[rpc.CmdListDirectory] = (*call).listDirectory
	handlers[rpc.CmdNegotiateProtocol] = (*call).negotiateProtocol
	handlers[rpc.CmdGetAvailableCommands] = (*call).availableCommands
	handlers[rpc.CmdOpenSession] = (*call).openSession
	handlers[rpc.CmdSetEventFilter] = (*call).setEventFilter
	handlers[rpc.CmdSetFastMode] = (*call).setFastMode
	handlers[rpc.CmdHandoff] = (*call).handoff
	handlers[rpc.CmdSetSubagentSubscription] = (*call).setSubagentSubscription
	handlers[rpc.CmdGetSubagents] = (*call).getSubagents
	handlers[rpc.CmdGetSubagentMessages] = (*call).getSubagentMessages
	handlers[rpc.CmdGetMessagesPage] = (*call).messagesPage
	handlers[rpc.CmdGetLoginProviders] = (*call).loginProviders
	handlers[rpc.CmdLogin] = (*call).login
	handlers[rpc.CmdLogout] = (*call).logout
}

// images converts the accepted image forms to content blocks. An image
// given by URL stays a URL: providers fetch it, or pass it on, when the
// request is built.
func images(in []rpc.ImageInput) []ai.Content {
	var out []ai.Content
	for _, im := range in {
		switch {
		case im.Source != nil && im.Source.Type == "url":
			out = append(out, ai.ImageURL(im.Source.URL))
		case im.Source != nil:
			out = append(out, ai.Image(im.Source.Data, im.Source.MediaType))
		case im.URL != "":
			out = append(out, ai.ImageURL(im.URL))
		default:
			out = append(out, ai.Image(im.Data, im.MimeType))
		}
	}
	return out
}

// abort stops the run, a retry, compactions or branch summaries and this
// connection's login; it answers after the commands it cut short have
// answered.
func (s *call) abort([]byte) (any, error) {
	s.cancelLogin()
	s.sess.Abort()
	waitAll(s.cutShort)
	return nil, nil
}

// abortBranchSummary cancels a summary that navigate_tree started; like
// abort, it answers after the command it cut short has answered, so that
// the order of the two answers does not depend on scheduling.
func (s *call) abortBranchSummary([]byte) (any, error) {
	s.sess.AbortBranchSummary()
	waitAll(s.cutShort)
	return nil, nil
}

// getMessages answers with the context's messages, written out by the
// writer in pieces: messages read from the session file are copied from
// their lines where those are what the encoders would write (a
// 20000-entry context is megabytes: no second encoding, no big buffer).
func (s *call) getMessages([]byte) (any, error) {
	list, err := s.sess.Store().MessagesJSON()
	if err != nil {
		return nil, err
	}
	return &arrayData{head: `{"messages":`, list: list, tail: []byte{'}'}}, nil
}

// arrayData is response data made of a JSON array between a fixed head
// and tail: {"messages":[...]} and {"entries":[...],"leafId":...}.
type arrayData struct {
	head string
	list *session.JSONArray
	tail []byte
}

func (d *arrayData) SizeHint() int { return len(d.head) + d.list.Len() + len(d.tail) }

func (d *arrayData) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, d.SizeHint()), d.head...)
	b = d.list.AppendTo(b)
	return append(b, d.tail...), nil
}

func (d *arrayData) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, d.head)
	if err != nil {
		return int64(n), err
	}
	m, err := d.list.WriteTo(w)
	if err != nil {
		return int64(n) + m, err
	}
	k, err := w.Write(d.tail)
	return int64(n) + m + int64(k), err
}

// message reads the members of a prompt, steer, follow_up or
// abort_and_prompt from the line as Handle decoded and checked it, so that
// a short line is not decoded twice. Images, which need their own types,
// and a long message (the envelope keeps only its length) are decoded
// from the line, once, by decode.
func (s *call) message(line []byte) (msg, behavior string, imgs []rpc.ImageInput, err error) {
	msg, short := s.obj["message"].(string)
	behavior, _ = s.obj["streamingBehavior"].(string)
	if s.obj["images"] == nil && short {
		return msg, behavior, nil, nil
	}
	var c struct {
		Message string           `json:"message"`
		Images  []rpc.ImageInput `json:"images"`
	}
	if err := decode(line, &c); err != nil {
		return "", "", nil, err
	}
	return c.Message, behavior, c.Images, nil
}

func (s *call) prompt(line []byte) (any, error) {
	var c rpc.PromptCommand
	var err error
	if c.Message, c.StreamingBehavior, c.Images, err = s.message(line); err != nil {
		return nil, err
	}
	c.ID, _ = idOf(s.obj)
	c.Type = rpc.CmdPrompt
	if s.opts.Legacy {
		// The older wire acknowledges at once and reports a failure to start
		// as a second response with the same id.
		s.w.response(&rpc.Response{ID: c.ID, Command: c.Type, Success: true})
		if _, err := s.sess.Prompt(c.Message, images(c.Images), c.StreamingBehavior); err != nil {
			return nil, err
		}
		return nil, errAnswered
	}
	if s.omp.Load() {
		// oh-my-pi answers before trying the prompt; one that cannot start
		// gets a second, failed response and its prompt_result.
		s.ompPrompt(c.ID, c.Type, func(accepted func(string)) error {
			_, err := s.sess.PromptThen(c.Message, images(c.Images), c.StreamingBehavior, accepted)
			return err
		})
		return nil, errAnswered
	}
	if _, err := s.sess.PromptThen(c.Message, images(c.Images), c.StreamingBehavior, s.acceptedResponse(c.ID, c.Type)); err != nil {
		return nil, err
	}
	return nil, errAnswered
}

// acceptedResponse answers a prompt once the core has accepted it, before
// the run emits agent_start.
func (s *call) acceptedResponse(id, cmd string) func(string) {
	return func(d string) {
		b := jsonx.AppendString(append(make([]byte, 0, 32), `{"disposition":`...), d)
		b = append(b, '}') // rpc.PromptData
		s.w.response(&rpc.Response{ID: id, Command: cmd, Success: true, Data: b})
	}
}

func (s *call) steer(line []byte) (any, error) {
	var c rpc.MessageCommand
	var err error
	if c.Message, _, c.Images, err = s.message(line); err != nil {
		return nil, err
	}
	c.ID, _ = idOf(s.obj)
	c.Type, _ = s.obj["type"].(string)
	d, err := s.sess.Steer(c.Message, images(c.Images))
	if err != nil {
		return nil, err
	}
	return rpc.PromptData{Disposition: d}, nil
}

func (s *call) followUp(line []byte) (any, error) {
	var c rpc.MessageCommand
	var err error
	if c.Message, _, c.Images, err = s.message(line); err != nil {
		return nil, err
	}
	c.ID, _ = idOf(s.obj)
	c.Type, _ = s.obj["type"].(string)
	d, err := s.sess.FollowUp(c.Message, images(c.Images))
	if err != nil {
		return nil, err
	}
	return rpc.PromptData{Disposition: d}, nil
}

func (s *call) abortAndPrompt(line []byte) (any, error) {
	var c rpc.MessageCommand
	var err error
	if c.Message, _, c.Images, err = s.message(line); err != nil {
		return nil, err
	}
	c.ID, _ = idOf(s.obj)
	c.Type, _ = s.obj["type"].(string)
	if s.opts.Legacy {
		s.w.response(&rpc.Response{ID: c.ID, Command: c.Type, Success: true})
		if _, err := s.sess.AbortAndPrompt(c.Message, images(c.Images), nil); err != nil {
			return nil, err
		}
		return nil, errAnswered
	}
	if s.omp.Load() {
		// Answered before the prompt is tried, as prompt is (above); no
		// session_settled between the abort and the new prompt.
		s.ompPrompt(c.ID, c.Type, func(accepted func(string)) error {
			_, err := s.sess.AbortAndPrompt(c.Message, images(c.Images), accepted)
			return err
		})
		return nil, errAnswered
	}
	if _, err := s.sess.AbortAndPrompt(c.Message, images(c.Images), s.acceptedResponse(c.ID, c.Type)); err != nil {
		return nil, err
	}
	return nil, errAnswered
}

func (s *call) clearQueue([]byte) (any, error) {
	st, fu := s.sess.ClearQueue()
	return rpc.ClearQueueData{Steering: st, FollowUp: fu}, nil
}

func (s *call) newSession(line []byte) (any, error) {
	var c rpc.NewSessionCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	cwd := c.Cwd
	if cwd != "" {
		p, err := s.resolvePath(cwd)
		if err != nil {
			return nil, err
		}
		cwd = p
	}
	h, err := s.sessions.NewSession(s.hub, cwd, c.ParentSession)
	if err != nil {
		if err == core.ErrCancelled {
			return rpc.CancelledData{Cancelled: true}, nil
		}
		return nil, err
	}
	s.moved(h, core.ChangeNew)
	s.sessionChanged()
	return rpc.CancelledData{Cancelled: false}, nil
}

func (s *call) getState([]byte) (any, error) {
	st := s.sess.State()
	return rpc.SessionState{
		Model:                 st.Model,
		ThinkingLevel:         st.ThinkingLevel,
		IsStreaming:           st.IsStreaming,
		IsCompacting:          st.IsCompacting,
		SteeringMode:          st.SteeringMode,
		FollowUpMode:          st.FollowUpMode,
		SessionFile:           st.SessionFile,
		SessionID:             st.SessionID,
		SessionName:           st.SessionName,
		AutoCompactionEnabled: st.AutoCompaction,
		MessageCount:          st.MessageCount,
		PendingMessageCount:   st.PendingMessageCount,
		InterruptMode:         st.InterruptMode,
		QueuedMessageCount:    st.PendingMessageCount,
		QueueMode:             st.SteeringMode,
		TodoPhases:            jsonx.MustMarshal(s.todoPhases()),
		IsSettled:             s.isSettled(st),
		OMPState:              s.ompState(),
	}, nil
}

// ompState is what get_state adds on oh-my-pi's wire (nil elsewhere).
func (s *call) ompState() *rpc.OMPState {
	if !s.omp.Load() {
		return nil
	}
	o := &rpc.OMPState{HasPendingAsyncWork: s.sess.HasPendingAsyncWork(), DumpTools: []rpc.DumpTool{}}
	o.FastModeEnabled, o.FastModeActive = s.sess.FastMode()
	if r, ok := s.sess.TokensPerSecond(); ok {
		o.TokensPerSecond = &r
	}
	sections, active := s.sess.PromptView()
	o.SystemPrompt = sections
	for _, t := range active {
		o.DumpTools = append(o.DumpTools, rpc.DumpTool{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()})
	}
	if u := s.sess.ContextUsage(); u.Known {
		o.ContextUsage = &rpc.OMPContextUsage{Tokens: u.Tokens, ContextWindow: u.ContextWindow, Percent: u.Percent}
	}
	return o
}

// isSettled is get_state's isSettled on oh-my-pi's wire (nil elsewhere):
// no run, no compaction, nothing queued, no prompt answered but not yet
// started.
func (s *call) isSettled(st core.State) *bool {
	if !s.omp.Load() {
		return nil
	}
	v := !st.IsStreaming && !st.IsCompacting && st.PendingMessageCount == 0 && !s.ompHeld()
	return &v
}

func (s *call) todoPhases() []task.TodoPhase {
	p := s.sess.Todos().Phases()
	if p == nil {
		p = []task.TodoPhase{}
	}
	return p
}

func (s *call) setTodos(line []byte) (any, error) {
	var c struct {
		Phases []task.TodoPhase `json:"phases"`
	}
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if _, err := s.sess.Todos().Set(c.Phases); err != nil {
		return nil, err
	}
	return rpc.TodosData{TodoPhases: jsonx.MustMarshal(s.todoPhases())}, nil
}

func (s *call) setModel(line []byte) (any, error) {
	var c rpc.SetModelCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	m, err := s.sess.SetModel(c.Provider, c.ModelID)
	if err == nil {
		s.modelChanged()
	}
	return m, err
}

// modelChanged tells a client on oh-my-pi's wire that the model changed.
func (s *call) modelChanged() {
	if s.omp.Load() {
		s.queueEvent(&rpc.ModelChangedEvent{Type: rpc.EventModelChanged})
	}
}

func (s *call) cycleModel([]byte) (any, error) {
	m, level, scoped := s.sess.CycleModel()
	if m == nil {
		return jsonNull, nil
	}
	s.modelChanged()
	return rpc.CycleModelData{Model: m, ThinkingLevel: level, IsScoped: scoped}, nil
}

func (s *call) availableModels([]byte) (any, error) {
	ms := s.sess.Models().Available()
	if ms == nil {
		ms = []*ai.Model{}
	}
	return rpc.ModelsData{Models: ms}, nil
}

func (s *call) setThinkingLevel(line []byte) (any, error) {
	var c rpc.SetThinkingLevelCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	_, err := s.sess.SetThinkingLevel(c.Level)
	return nil, err
}

func (s *call) cycleThinkingLevel([]byte) (any, error) {
	l := s.sess.CycleThinkingLevel()
	if l == "" {
		return jsonNull, nil
	}
	return rpc.LevelData{Level: l}, nil
}

func (s *call) setMode(line []byte) (any, error) {
	var c rpc.SetModeCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	switch c.Type {
	case rpc.CmdSetSteeringMode, rpc.CmdSetQueueMode:
		return nil, s.sess.SetSteeringMode(c.Mode)
	case rpc.CmdSetFollowUpMode:
		return nil, s.sess.SetFollowUpMode(c.Mode)
	default:
		return nil, s.sess.SetInterruptMode(c.Mode)
	}
}

func (s *call) setEnabled(line []byte) (any, error) {
	var c rpc.SetEnabledCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if c.Type == rpc.CmdSetAutoCompaction {
		return nil, s.sess.SetAutoCompaction(c.Enabled)
	}
	return nil, s.sess.SetAutoRetry(c.Enabled)
}

func (s *call) bash(line []byte) (any, error) {
	var c rpc.BashCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	r, err := s.sess.RunBash(c.ID, c.Command, c.ExcludeFromContext)
	if err != nil {
		return nil, err
	}
	return rpc.BashData{Output: r.Output, ExitCode: r.ExitCode, Cancelled: r.Cancelled, Truncated: r.Truncated, FullOutputPath: r.FullOutputPath}, nil
}

func (s *call) stats([]byte) (any, error) {
	st := s.sess.Stats()
	return rpc.SessionStats{
		SessionFile: st.SessionFile, SessionID: st.SessionID,
		UserMessages: st.UserMessages, AssistantMessages: st.AssistantMessages,
		ToolCalls: st.ToolCalls, ToolResults: st.ToolResults, TotalMessages: st.TotalMessages,
		Tokens: rpc.TokenStats{
			Input: st.Tokens.Input, Output: st.Tokens.Output,
			CacheRead: st.Tokens.CacheRead, CacheWrite: st.Tokens.CacheWrite,
			Total: st.Tokens.TotalTokens,
		},
		Cost:         st.Cost,
		ContextUsage: statsContextUsage(s.sess.ContextUsage()),
		Subagents:    subagentStats(s.sess.SubagentStats()),
	}, nil
}

func subagentStats(st task.SubagentStats) *rpc.SubagentStats {
	if st.Count == 0 {
		return nil
	}
	return &rpc.SubagentStats{Count: st.Count, Tokens: st.Tokens, Cost: st.Cost}
}

func statsContextUsage(u core.ContextUsage) *rpc.StatsContextUsage {
	if u.ContextWindow == 0 {
		return nil
	}
	cu := &rpc.StatsContextUsage{ContextWindow: u.ContextWindow}
	if u.Known || u.Estimated {
		t, p := u.Tokens, u.Percent
		cu.Tokens, cu.Percent = &t, &p
	}
	return cu
}

func (s *call) compact(line []byte) (any, error) {
	var c rpc.CompactCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	r, err := s.sess.Compact(c.CustomInstructions)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s *call) contextUsage([]byte) (any, error) {
	u := s.sess.ContextUsage()
	if !u.Known && !u.Estimated {
		return rpc.ContextUsageData{}, nil
	}
	var idx *int
	if u.LastUsageIndex >= 0 {
		idx = &u.LastUsageIndex
	}
	return rpc.ContextUsageData{Usage: &rpc.ContextUsage{
		Tokens: u.Tokens, ContextWindow: u.ContextWindow, Percent: u.Percent,
		UsageTokens: u.UsageTokens, TrailingTokens: u.TrailingTokens, LastUsageIndex: idx,
	}}, nil
}

func (s *call) navigateTree(line []byte) (any, error) {
	var c rpc.NavigateTreeCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	r, err := s.sess.NavigateTree(c.TargetID, core.NavigateOptions{
		Summarize: c.Summarize, CustomInstructions: c.CustomInstructions,
		ReplaceInstructions: c.ReplaceInstructions, Label: c.Label,
	})
	if err != nil {
		return nil, err
	}
	d := rpc.NavigateTreeData{Cancelled: r.Cancelled, Aborted: r.Aborted, EditorText: r.EditorText}
	if r.SummaryEntry != nil {
		d.SummaryEntry = &rpc.NavigateSummaryEntry{ID: r.SummaryEntry.ID, Summary: r.SummaryEntry.Summary, FromExtension: r.SummaryEntry.FromExtension}
	}
	return d, nil
}

func (s *call) setLabel(line []byte) (any, error) {
	var c struct {
		EntryID  string `json:"entryId"`
		TargetID string `json:"targetId"`
		Label    string `json:"label"`
	}
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	id := c.EntryID
	if id == "" {
		id = c.TargetID
	}
	return nil, s.sess.SetLabel(id, c.Label)
}

func (s *call) getTools([]byte) (any, error) {
	d := rpc.ToolsData{ActiveToolNames: s.sess.ActiveToolNames(), AllTools: []rpc.ToolInfo{}}
	mcpTools := map[string]core.MCPTool{}
	for _, t := range s.sess.MCPTools() {
		mcpTools[t.Tool.Name()] = t
	}
	for _, t := range s.sess.AllTools() {
		info := rpc.ToolInfo{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()}
		if m, ok := mcpTools[t.Name()]; ok {
			info.Server, info.Exposure = m.Server, m.Exposure
		}
		d.AllTools = append(d.AllTools, info)
	}
	if st := s.sess.MCPStatus(); len(st.Servers) > 0 {
		d.MCPServers = st.Servers
	}
	return d, nil
}

func (s *call) mcpStatus([]byte) (any, error) {
	return s.sess.MCPStatus(), nil
}

func (s *call) setActiveTools(line []byte) (any, error) {
	var c rpc.SetActiveToolsCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if err := s.sess.SetActiveTools(c.ToolNames); err != nil {
		return nil, err
	}
	return rpc.ActiveToolsData{ActiveToolNames: s.sess.ActiveToolNames()}, nil
}

// sessionChanged closes what oh-my-pi's wire has open for the session the
// connection left (its prompts end as aborted).
func (s *call) sessionChanged() {
	if s.omp.Load() {
		s.ompSessionChanged()
		s.commandsUpdate()
	}
}

// moved puts the connection on h after a command that opened it. On stdio
// the session replaced its store in place and announced it itself; a
// connection that opened the session it is on is told again (as stdio
// tells a switch to the open file); otherwise it attaches to h, and alone
// is told.
func (s *call) moved(h *Hub, reason string) {
	if ip, ok := s.sessions.(InPlacer); ok && ip.InPlace() {
		return
	}
	if h == s.Hub() {
		s.queueEvent(h.sess.SessionChangedEvent(reason))
		return
	}
	s.attach(h, reason)
}

func (s *call) switchSession(line []byte) (any, error) {
	var c rpc.SwitchSessionCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	h, err := s.sessions.Switch(s.hub, c.SessionPath)
	if err != nil {
		if err == core.ErrCancelled {
			return rpc.CancelledData{Cancelled: true}, nil
		}
		return nil, err
	}
	s.moved(h, core.ChangeSwitch)
	s.sessionChanged()
	return rpc.CancelledData{}, nil
}

func (s *call) fork(line []byte) (any, error) {
	var c rpc.ForkCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	h, text, err := s.sessions.Fork(s.hub, c.EntryID)
	if err != nil {
		if err == core.ErrCancelled {
			return rpc.ForkData{Cancelled: true}, nil
		}
		return nil, err
	}
	s.moved(h, core.ChangeFork)
	s.sessionChanged()
	return rpc.ForkData{Text: text}, nil
}

func (s *call) clone([]byte) (any, error) {
	h, err := s.sessions.Clone(s.hub)
	if err != nil {
		if err == core.ErrCancelled {
			return rpc.CancelledData{Cancelled: true}, nil
		}
		return nil, err
	}
	s.moved(h, core.ChangeFork)
	s.sessionChanged()
	return rpc.CancelledData{}, nil
}

func (s *call) forkMessages([]byte) (any, error) {
	out := []rpc.ForkMessage{}
	for _, m := range s.sess.ForkMessages() {
		out = append(out, rpc.ForkMessage{EntryID: m.EntryID, Text: m.Text})
	}
	return rpc.ForkMessagesData{Messages: out}, nil
}

func (s *call) entries(line []byte) (any, error) {
	var c rpc.GetEntriesCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	st := s.sess.Store()
	all := st.Entries()
	start := 0
	if c.Since != "" {
		start = -1
		for i, e := range all {
			if e.ID == c.Since {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, fmt.Errorf("Entry not found: %s", c.Since)
		}
	}
	// The lines go out as they are (streamed like get_messages), or
	// compacted as encoding/json writes a json.RawMessage.
	list, err := session.EntriesJSON(all[start:])
	if err != nil {
		return nil, err
	}
	tail := []byte(`,"leafId":`)
	if id := leafOf(st); id != nil {
		tail = jsonx.AppendString(tail, *id)
	} else {
		tail = append(tail, "null"...)
	}
	return &arrayData{head: `{"entries":`, list: list, tail: append(tail, '}')}, nil
}

func leafOf(st *session.Session) *string {
	if id := st.LeafID(); id != "" {
		return &id
	}
	return nil
}

// tree answers get_tree with pi's raw form, written iteratively: a deep
// linear session (100000 entries) must not overflow anything.
func (s *call) tree(line []byte) (any, error) {
	var c rpc.GetTreeCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	t := browse.RawTree(s.sess.Store(), c.Flat) // streamed, as get_session_tree
	return &t, nil
}

func (s *call) sessionTree(line []byte) (any, error) {
	var c rpc.GetSessionTreeCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if c.View != browse.ViewDefault && c.View != browse.ViewBrowse {
		return nil, fmt.Errorf(`Invalid field "view": expected "" or "browse", got %q`, c.View)
	}
	// Streamed by the writer in 64 kB pieces: a 100000-entry tree is
	// 18 MB of JSON, which the client then reads while the rest is encoded.
	t := browse.SessionTree(s.sess.Store(), browse.TreeOptions{View: c.View, Flat: c.Flat})
	return &t, nil
}

func (s *call) listSessions(line []byte) (any, error) {
	var c rpc.ListSessionsCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	infos, err := s.sess.ListSessions(c.Scope, c.SessionDir)
	if err != nil {
		return nil, err
	}
	// Written from each session's encoded item, kept with the listing
	// cache: a repeated listing (7.5 MB for 2000 sessions) is neither
	// encoded again nor copied into one buffer.
	return browse.ListSessionsJSON(infos, browse.ListQuery{
		Scope: c.Scope, SessionDir: c.SessionDir, Query: c.Query,
		Limit: c.Limit, Offset: c.Offset, IncludeText: c.IncludeText,
	}), nil
}

func (s *call) renameSession(line []byte) (any, error) {
	var c rpc.RenameSessionCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	h, err := s.sessions.Writer(c.SessionPath)
	if err != nil {
		return nil, err
	}
	if h != nil && h != s.hub {
		// Open in another session of this process: its writer names it.
		if ro := h.ReadOnly(); ro != "" {
			return nil, fmt.Errorf("Read-only session: %s", ro)
		}
		return nil, h.sess.SetSessionName(c.Name)
	}
	return nil, s.sess.RenameSession(c.SessionPath, c.Name)
}

func (s *call) deleteSession(line []byte) (any, error) {
	var c rpc.DeleteSessionCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	h, err := s.sessions.Writer(c.SessionPath)
	if err != nil {
		return nil, err
	}
	if h != nil && h != s.hub {
		return nil, fmt.Errorf("Cannot delete a session that is open: %s", c.SessionPath)
	}
	dst, err := s.sess.DeleteSession(c.SessionPath)
	if err != nil {
		return nil, err
	}
	return rpc.DeleteSessionData{TrashPath: dst}, nil
}

func (s *call) exportHTML(line []byte) (any, error) {
	var c rpc.ExportHTMLCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	if c.Inline {
		if c.OutputPath != "" {
			return nil, errors.New("export_html takes outputPath or inline, not both")
		}
		html, name, err := s.sess.ExportHTMLContent()
		if err != nil {
			return nil, err
		}
		return rpc.ExportHTMLData{HTML: string(html), FileName: name}, nil
	}
	p, err := s.sess.ExportHTML(c.OutputPath)
	if err != nil {
		return nil, err
	}
	return rpc.ExportHTMLData{Path: p}, nil
}

func (s *call) lastAssistantText([]byte) (any, error) {
	t, ok := s.sess.LastAssistantText()
	if !ok {
		return rpc.TextData{}, nil
	}
	return rpc.TextData{Text: &t}, nil
}

func (s *call) setSessionName(line []byte) (any, error) {
	var c rpc.SetSessionNameCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	return nil, s.sess.SetSessionName(c.Name)
}

// errAnswered tells run that the handler already wrote its response.
var errAnswered = fmt.Errorf("already answered")

// resolvePath makes a path from a client absolute: a leading ~ is the home
// directory, and a relative path is taken from the session's directory.
func (s *call) resolvePath(p string) (string, error) {
	p, err := fsx.ExpandHome(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.sess.Cwd(), p)
	}
	return filepath.Clean(p), nil
}

// listDirectory answers list_directory: the directories in a directory
// (the project picker of a web UI), dotfiles left out, sorted by name. An
// empty path is the home directory.
func (s *call) listDirectory(line []byte) (any, error) {
	var c rpc.ListDirectoryCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	p := c.Path
	if strings.TrimSpace(p) == "" {
		p = "~"
	}
	abs, err := s.resolvePath(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("Path does not exist: %s", abs)
		}
		return nil, fmt.Errorf("Cannot read %s: %v", abs, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("Path is not a directory: %s", abs)
	}
	des, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("Cannot read %s: %v", abs, err)
	}
	out := rpc.ListDirectoryData{AbsolutePath: abs, Entries: []rpc.DirectoryEntry{}}
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		isDir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			// A link to a directory is one (its target is what a session
			// opened there works in).
			if t, err := os.Stat(filepath.Join(abs, name)); err == nil && t.IsDir() {
				isDir = true
			}
		}
		if isDir {
			out.Entries = append(out.Entries, rpc.DirectoryEntry{Name: name, IsDirectory: true})
		}
	}
	slices.SortFunc(out.Entries, func(a, b rpc.DirectoryEntry) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}
