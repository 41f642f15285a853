package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/session"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// The task tool's subagents run as core sessions inside this process: no
// process start-up, one model catalogue.

var _ task.Spawner = (*Session)(nil)

// setupTask creates the task and todo tools and the session budget.
func (s *Session) setupTask() {
	ts := task.LoadSettings(s.opts.Settings)
	if !s.opts.isSubagent {
		// A subagent's spending is counted by its parent (the task tool and
		// the subagent-scope controller of RunSubagent).
		s.budget = task.NewController(task.ControllerOptions{Scope: task.ScopeSession, Limits: ts.Budget, Emit: s.emit})
	}
	s.todos = task.NewTodoList(nil)
	s.taskTool = task.New(task.Options{
		Spawner:       s,
		Emit:          s.emit,
		Cwd:           s.cwd,
		Project:       func() (string, bool) { return s.Cwd(), s.Trusted() },
		AgentDir:      s.opts.AgentDir,
		Settings:      ts,
		ArtifactsDir:  strings.TrimSuffix(s.store.File(), ".jsonl"),
		SessionBudget: s.budget,
		IDPrefix:      s.opts.taskIDPrefix,
	})
}

// resetTask gives a new session a fresh budget, todo list and task tool.
func (s *Session) resetTask() {
	s.mu.Lock()
	old := s.budget
	s.mu.Unlock()
	old.Close()
	s.mu.Lock()
	s.setupTask()
	if s.opts.ToolsFor != nil {
		s.tools = s.withTaskTools(s.opts.ToolsFor(s.cwd))
	} else {
		s.tools = s.withTaskTools(s.opts.Tools)
	}
	s.mu.Unlock()
}

// withTaskTools adds the task and todo tools to a tool set (subagents get
// no todo tool, and a task tool only when their agent lists it).
func (s *Session) withTaskTools(ts []tools.Tool) []tools.Tool {
	out := slices.Clip(ts)
	if s.taskTool != nil {
		out = append(out, s.taskTool)
	}
	if s.todos != nil && !s.opts.isSubagent {
		out = append(out, s.todos.Tool())
	}
	return append(out, s.hostTools...)
}

// SubagentStats is the subagents member of get_session_stats.
func (s *Session) SubagentStats() task.SubagentStats {
	s.mu.Lock()
	t := s.taskTool
	s.mu.Unlock()
	if t == nil {
		return task.SubagentStats{}
	}
	return t.Stats()
}

// Todos returns the todo list (set_todos, get_state's todoPhases); a new
// session replaces it (resetTask, under s.mu).
func (s *Session) Todos() *task.TodoList {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.todos
}

// allowedTools is what a subagent may get: the session's tool policy
// (Options.AllowedTools) and the tools active in the session now (the
// client or an extension may have activated more since); nil: no limit.
func (s *Session) allowedTools() map[string]bool {
	if s.opts.AllowedTools == nil {
		return nil
	}
	out := map[string]bool{}
	for _, n := range s.opts.AllowedTools {
		out[n] = true
	}
	s.mu.Lock()
	for _, n := range s.active {
		out[n] = true
	}
	s.mu.Unlock()
	return out
}

// budgetError refuses prompts once the session budget is exceeded.
func (s *Session) budgetError() error {
	s.mu.Lock()
	b := s.budget
	s.mu.Unlock()
	return b.PromptError()
}

// RunSubagent runs one task item: a fresh in-memory core session with the
// agent's prompt, model and tools plus submit_result, prompted with the
// assignment, reminded (at most 3 times) when it stops without submitting.
func (s *Session) RunSubagent(ctx context.Context, spec task.SubagentSpec) task.SubagentOutcome {
	submit := task.NewSubmitResultTool(spec.Schema)
	model := s.Model()
	if spec.Agent.Model != "" {
		if m, err := s.opts.Models.Resolve("", spec.Agent.Model); err == nil {
			model = m
		}
	}
	cwd := spec.Cwd
	if cwd == "" {
		cwd = s.Cwd()
	}
	all := s.opts.Tools
	if s.opts.ToolsFor != nil {
		all = s.opts.ToolsFor(cwd)
	}
	names := spec.Agent.Tools
	if names == nil {
		names = tools.DefaultActive
	}
	allowed := s.allowedTools()
	var ts []tools.Tool
	var active, withheld []string
	for _, t := range all {
		if !slices.Contains(names, t.Name()) {
			continue
		}
		if allowed != nil && !allowed[t.Name()] {
			withheld = append(withheld, t.Name())
			continue
		}
		ts = append(ts, t)
		active = append(active, t.Name())
	}
	nested := slices.Contains(names, task.Name)
	if nested && allowed != nil && !allowed[task.Name] {
		nested = false
		withheld = append(withheld, task.Name)
	}
	if len(withheld) > 0 {
		s.logf("agent %s: %s not allowed in this session; the subagent runs without", spec.Agent.Name, strings.Join(withheld, ", "))
	}
	policy := append([]string(nil), active...)
	if nested {
		policy = append(policy, task.Name)
	}
	ts = append(ts, submit)
	active = append(active, submit.Name())
	store, err := session.New(session.Options{Cwd: cwd, InMemory: true})
	if err != nil {
		return task.SubagentOutcome{Error: err.Error(), ExitCode: 1}
	}
	child, err := New(Options{
		AgentDir: s.opts.AgentDir, Cwd: cwd, Settings: s.opts.Settings, Models: s.opts.Models,
		Store: store, InMemory: true, Model: model, ThinkingLevel: s.ThinkingLevel(),
		Tools: ts, ActiveTools: active, SystemPrompt: spec.Agent.Prompt,
		NoContextFiles: s.opts.NoContextFiles, APIKey: s.opts.APIKey, Log: s.log, Trusted: s.Trusted(),
		AllowedTools: policy,
		SkillPaths:   s.opts.SkillPaths, PromptPaths: s.opts.PromptPaths,
		NoSkills: s.opts.NoSkills, NoPromptTemplates: s.opts.NoPromptTemplates,
		isSubagent: true, taskIDPrefix: spec.ID + ".",
	})
	if err != nil {
		return task.SubagentOutcome{Error: err.Error(), ExitCode: 1}
	}
	defer child.Close()
	if nested && child.taskTool != nil {
		child.SetActiveTools(append(active, task.Name))
	}
	var ctl *task.Controller
	if spec.Budget != nil {
		ctl = task.NewController(task.ControllerOptions{
			Scope: task.ScopeSubagent, Limits: *spec.Budget, ID: spec.ID,
			ParentToolCallID: spec.ParentToolCallID, Emit: s.emit,
		})
		defer ctl.Close()
	}
	var usage ai.Usage
	toolCalls := 0
	budgetStop := false
	unsub := child.Subscribe(func(ev rpc.Event) {
		ctl.Observe(ev)
		switch e := ev.(type) {
		case *rpc.MessageEndEvent:
			if a, ok := e.Message.(*ai.AssistantMessage); ok {
				usage.Add(a.Usage)
			}
		case *rpc.ToolExecutionStartEvent:
			toolCalls++
		}
		if over, _ := ctl.Exceeded(); over && !budgetStop {
			budgetStop = true
			go child.Abort()
		}
	})
	defer unsub()

	text := spec.Assignment
	aborted := false
	for {
		if _, err := child.Prompt(text, nil, ""); err != nil {
			return task.SubagentOutcome{Error: err.Error(), ExitCode: 1, Usage: usage, ToolCalls: toolCalls}
		}
		done := make(chan struct{})
		go func() { child.WaitIdle(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			child.Abort()
			<-done
			aborted = true
		}
		if aborted || budgetStop {
			break
		}
		if last := lastAssistant(child.Messages()); last != nil && last.StopReason == ai.StopError {
			return task.SubagentOutcome{Error: last.ErrorMessage, ExitCode: 1, Usage: usage, ToolCalls: toolCalls}
		}
		reminder, ok := submit.NextReminder()
		if !ok {
			break
		}
		text = reminder
	}
	out := submit.Outcome()
	out.Usage, out.ToolCalls = usage, toolCalls
	if t, ok := child.LastAssistantText(); ok {
		out.Output = t
	}
	switch {
	case budgetStop:
		out.Aborted, out.AbortReason = true, task.AbortReasonBudgetExceeded
		if out.ExitCode == 0 && out.Result == nil {
			out.ExitCode = 1
		}
	case aborted:
		out.Aborted, out.AbortReason = true, "cancelled"
		if out.ExitCode == 0 && out.Result == nil {
			out.ExitCode = 1
		}
		if out.Error == "" {
			out.Error = fmt.Sprintf("subagent %s was aborted", spec.ID)
		}
	}
	return out
}

func lastAssistant(msgs []ai.Message) *ai.AssistantMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if a, ok := msgs[i].(*ai.AssistantMessage); ok {
			return a
		}
	}
	return nil
}
