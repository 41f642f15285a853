// Package task implements the task tool: subagents run in parallel inside
// the Pisces process, optionally in isolated git worktrees whose changes
// come back as patches, optionally verified by the project's own commands
// with bounded repair retries, within budgets. It also holds the agent
// definitions, the submit_result tool subagents finish with, the budget
// controller, and the todo list (todo_write, set_todos, todo_reminder).
//
// The package does not run models itself: the core implements Spawner and
// runs each subagent as its own session.
package task

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/jsonx"
	"github.com/pisces-agent/pisces/internal/tools"
	"github.com/pisces-agent/pisces/rpc"
)

// Name is the task tool's name.
const Name = "task"

// MaxTaskIDLength is the longest task id the tool accepts.
const MaxTaskIDLength = 48

// Inline limits: longer outputs and patches are written to the artifacts
// directory and referenced.
const (
	maxInlineOutputBytes = 16 * 1024
	maxInlineOutputLines = 400
	maxInlinePatchBytes  = 8 * 1024
	maxInlinePatchLines  = 200
)

//go:embed task.md
var taskDescription string

// Spawner runs subagents; the core implements it.
type Spawner interface {
	// RunSubagent runs one subagent to completion in-process and returns
	// its outcome. It must honour ctx (cancel = abort, with Aborted set).
	// It may be called concurrently, and again with the same spec.ID for a
	// verification repair (spec.Repair > 0, same Cwd). A panic is recovered
	// by the task tool and becomes the item's failure.
	RunSubagent(ctx context.Context, spec SubagentSpec) SubagentOutcome
}

// SpawnerFunc adapts a function to Spawner.
type SpawnerFunc func(ctx context.Context, spec SubagentSpec) SubagentOutcome

// RunSubagent calls f.
func (f SpawnerFunc) RunSubagent(ctx context.Context, spec SubagentSpec) SubagentOutcome {
	return f(ctx, spec)
}

// SubagentSpec describes one subagent run.
type SubagentSpec struct {
	// ID is the item's unique id ("<n>-<TaskID>", with the parent item's id
	// and "." in front for nested calls); events and artifacts use it.
	ID          string
	TaskID      string // the id the model gave
	Index       int    // position in the call's tasks
	Description string // the one-line label (not for the subagent)
	Agent       AgentDef
	// Assignment is the subagent's complete first user message: shared
	// context, the assignment and how to submit (with the schema). For a
	// repair run it also carries the failing verification output.
	Assignment string
	// Schema is the call's output schema (JTD), nil when none; pass it to
	// NewSubmitResultTool.
	Schema json.RawMessage
	// Cwd is the working directory: the worktree for isolated items,
	// Options.Cwd otherwise.
	Cwd      string
	Isolated bool
	// Budget is the per-subagent limit (task.budget.subagent.*), nil when
	// none is set. The core runs the subagent with a Controller of scope
	// "subagent" and aborts it (AbortReason "budget_exceeded") when exceeded.
	Budget           *Limits
	ParentToolCallID string
	// Repair is 0 for the item's run and n for its n-th verification
	// repair, which continues in the same worktree.
	Repair int
}

// SubagentOutcome is the result of one subagent run. SubmitResultTool's
// Outcome fills Result, Error and ExitCode; the core adds the rest.
type SubagentOutcome struct {
	Result      json.RawMessage // submit_result's data
	Output      string          // optional: the last assistant text, used when Result is empty
	Error       string
	ExitCode    int
	Usage       ai.Usage // summed over the subagent's model calls
	ToolCalls   int
	Aborted     bool
	AbortReason string // "budget_exceeded", "cancelled", ...
}

// Options configure a task tool.
type Options struct {
	Spawner Spawner
	// Emit receives subagent_* events and task-scope budget events. Calls
	// are serialised. Nil drops them.
	Emit func(rpc.Event)
	Cwd  string // the parent's working directory (when Project is nil)
	// Project, when set, gives the parent's current working directory and
	// whether that project is trusted; it is asked at each call, so a
	// session that moves to another directory is followed. Without it Cwd
	// is used, untrusted.
	Project  func() (cwd string, trusted bool)
	AgentDir string // for <agentDir>/agents/
	// Agents, when set, replaces discovery (DiscoverAgents of AgentDir and,
	// for a trusted project only, the project's .pisces/agents/, at each
	// call).
	Agents   func() []AgentDef
	Settings Settings
	// ArtifactsDir holds long outputs, patches and verification logs (the
	// session file's path without .jsonl). Empty: a temporary directory is
	// created on first use.
	ArtifactsDir string
	// SessionBudget is the session's controller (nil when no limit is set).
	// Spawns are refused once it is exceeded; each spawn and each
	// subagent's usage and tool calls are added to it.
	SessionBudget *Controller
	// IDPrefix goes in front of item ids (a nested task tool gets the
	// parent item's id followed by ".").
	IDPrefix string
	// Shell runs verification commands with -c; empty: bash, else sh.
	Shell string
}

// Tool is the task tool. One per session (it numbers items across calls).
type Tool struct {
	opts Options

	mu        sync.Mutex
	next      int
	artifacts string
	stats     SubagentStats
	running   int // subagents started and not yet resolved

	emitMu sync.Mutex
}

// SubagentStats sum every subagent run of a tool (for the subagents field
// of get_session_stats).
type SubagentStats struct {
	Count  int     `json:"count"`
	Tokens int64   `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// New returns a task tool.
func New(opts Options) *Tool {
	if opts.Settings.MaxConcurrency <= 0 {
		opts.Settings.MaxConcurrency = DefaultMaxConcurrency
	}
	if opts.Settings.Verification.FailureContextLineLimit <= 0 {
		opts.Settings.Verification.FailureContextLineLimit = DefaultFailureContextLineLimit
	}
	return &Tool{opts: opts}
}

// Name is "task".
func (t *Tool) Name() string { return Name }

// Description is the tool's text followed by the available agents.
func (t *Tool) Description() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(taskDescription))
	b.WriteString("\n\nAvailable agents:")
	for _, a := range t.agents() {
		fmt.Fprintf(&b, "\n- %s: %s", a.Name, oneLine(a.Description))
	}
	return b.String()
}

// Parameters is the JSON Schema of the arguments.
func (t *Tool) Parameters() json.RawMessage { return json.RawMessage(parametersSchema) }

const parametersSchema = `{"type":"object","properties":{` +
	`"agent":{"type":"string","description":"Agent type that runs every task of this call"},` +
	`"context":{"type":"string","description":"Background shared by every task, placed before each assignment"},` +
	`"schema":{"type":"object","patternProperties":{"^(.*)$":{}},"description":"JSON Type Definition (JTD) schema the result data of every task must follow"},` +
	`"tasks":{"type":"array","description":"The tasks; they run in parallel","items":{"type":"object","properties":{` +
	`"id":{"type":"string","maxLength":48,"description":"CamelCase identifier, unique in this call, at most 48 characters"},` +
	`"description":{"type":"string","description":"One-line label for the user; the subagent does not see it"},` +
	`"assignment":{"type":"string","description":"Complete instructions for the subagent, which has not seen this conversation: goal, files, exact change or question, edge cases, acceptance criteria"}},` +
	`"required":["id","description","assignment"]}},` +
	`"isolated":{"type":"boolean","description":"Run each task in its own git worktree; changes come back as patches"},` +
	`"verify":{"anyOf":[` +
	`{"type":"boolean","description":"Enable or disable verification of this isolated batch (true uses the default profile)"},` +
	`{"type":"string","description":"Named verification profile for this isolated batch"},` +
	`{"type":"object","properties":{` +
	`"profile":{"type":"string","description":"Profile to start from; the fields given here override it"},` +
	`"mode":{"type":"string","enum":["none","command"]},` +
	`"commands":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"command":{"type":"string"},"timeoutMs":{"type":"number","minimum":1},"optional":{"type":"boolean"}},"required":["name","command"]}},` +
	`"maxRetries":{"type":"number","minimum":0,"description":"Repair attempts after a failed verification"},` +
	`"onFailure":{"type":"string","enum":["return_failure","discard_patch","retry_once"]}}}]}},` +
	`"required":["agent","tasks"]}`

// Running returns how many subagents are under way (started and not yet
// resolved).
func (t *Tool) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running
}

// Stats returns the totals of every subagent run so far.
func (t *Tool) Stats() SubagentStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// ArtifactsDir returns the artifacts directory, creating it if needed.
func (t *Tool) ArtifactsDir() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.artifacts != "" {
		return t.artifacts, nil
	}
	if t.opts.ArtifactsDir != "" {
		if err := os.MkdirAll(t.opts.ArtifactsDir, 0o755); err != nil {
			return "", err
		}
		t.artifacts = t.opts.ArtifactsDir
		return t.artifacts, nil
	}
	dir, err := os.MkdirTemp("", "pisces-task-artifacts-")
	if err != nil {
		return "", err
	}
	t.artifacts = dir
	return dir, nil
}

func (t *Tool) agents() []AgentDef {
	if t.opts.Agents != nil {
		return t.opts.Agents()
	}
	cwd, trusted := t.project()
	if !trusted {
		cwd = "" // an untrusted project's agent definitions are not read
	}
	agents, _ := DiscoverAgents(t.opts.AgentDir, cwd)
	return agents
}

// project is the parent's working directory and whether it is trusted.
func (t *Tool) project() (string, bool) {
	if t.opts.Project != nil {
		return t.opts.Project()
	}
	return t.opts.Cwd, false
}

// cwd is the parent's working directory.
func (t *Tool) cwd() string {
	cwd, _ := t.project()
	return cwd
}

func (t *Tool) emit(ev rpc.Event) {
	if t.opts.Emit == nil {
		return
	}
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	rpc.SetType(ev)
	t.opts.Emit(ev)
}

// TaskSpec is one item of the tasks argument.
type TaskSpec struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Assignment  string `json:"assignment"`
}

// Params are the task tool's arguments.
type Params struct {
	Agent    string          `json:"agent"`
	Context  string          `json:"context,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	Tasks    []TaskSpec      `json:"tasks"`
	Isolated bool            `json:"isolated,omitempty"`
	Verify   json.RawMessage `json:"verify,omitempty"`
}

// ItemResult is one item of the tool result's details.
type ItemResult struct {
	Index       int    `json:"index"`
	ID          string `json:"id"`
	TaskID      string `json:"taskId"`
	Agent       string `json:"agent"`
	AgentSource string `json:"agentSource"`
	Description string `json:"description,omitempty"`
	Isolated    bool   `json:"isolated"`
	ExitCode    int    `json:"exitCode"`
	// Output is the final answer as text (cut when Truncated; the whole of
	// it is at OutputPath).
	Output     string `json:"output"`
	Truncated  bool   `json:"truncated"`
	OutputPath string `json:"outputPath,omitempty"`
	// Result is submit_result's data when small enough to inline.
	Result       json.RawMessage     `json:"result,omitempty"`
	Error        string              `json:"error,omitempty"`
	Aborted      bool                `json:"aborted,omitempty"`
	AbortReason  string              `json:"abortReason,omitempty"`
	DurationMs   int64               `json:"durationMs"`
	Tokens       int64               `json:"tokens"`
	Usage        ai.Usage            `json:"usage"`
	ToolCalls    int                 `json:"toolCalls"`
	PatchPath    string              `json:"patchPath,omitempty"`
	Patch        string              `json:"patch,omitempty"` // inline when short
	Verification *VerificationResult `json:"verification,omitempty"`
}

// Details are the tool result's details.
type Details struct {
	Results          []ItemResult `json:"results"`
	TotalDurationMs  int64        `json:"totalDurationMs"`
	Usage            *ai.Usage    `json:"usage,omitempty"`
	ArtifactsDir     string       `json:"artifactsDir,omitempty"`
	ProjectAgentsDir string       `json:"projectAgentsDir,omitempty"`
}

// Progress is the details of a tool_execution_update.
type Progress struct {
	Progress []ItemProgress `json:"progress"`
}

// ItemProgress is one item's state while the call runs: pending, running,
// verifying, completed, failed or aborted.
type ItemProgress struct {
	Index  int    `json:"index"`
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Status string `json:"status"`
}

// batch is one call in flight.
type batch struct {
	t        *Tool
	call     tools.Call
	params   Params
	agent    AgentDef
	plan     *verifyPlan
	repo     *repoState
	taskCtl  *Controller
	items    []ItemResult
	specs    []SubagentSpec
	progMu   sync.Mutex
	progress []ItemProgress
}

// Execute runs a call.
func (t *Tool) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	start := time.Now()
	fail := func(msg string) (tools.Result, error) {
		d := Details{Results: []ItemResult{}, TotalDurationMs: time.Since(start).Milliseconds(), ProjectAgentsDir: t.projectAgentsDir()}
		return tools.Result{Content: []ai.Content{ai.Text(msg)}, Details: jsonx.MustMarshal(d), IsError: true}, nil
	}
	p, err := ParseParams(call.Args)
	if err != nil {
		return fail(err.Error())
	}
	plan, err := resolveVerify(p.Verify, p.Isolated, t.opts.Settings.Verification)
	if err != nil {
		return fail(err.Error())
	}
	agents := t.agents()
	agent, ok := findAgent(agents, p.Agent)
	if !ok {
		names := make([]string, len(agents))
		for i, a := range agents {
			names[i] = a.Name
		}
		return fail(fmt.Sprintf("Unknown agent %q. Available: %s.", p.Agent, strings.Join(names, ", ")))
	}
	if msg := validateTasks(p.Tasks); msg != "" {
		return fail(msg)
	}
	if t.opts.Spawner == nil {
		return tools.Result{}, fmt.Errorf("task: no Spawner configured")
	}
	b := &batch{t: t, call: call, params: p, agent: agent, plan: plan}
	if p.Isolated {
		cwd := t.cwd()
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		repo, err := snapshotRepo(ctx, cwd)
		if err != nil {
			return fail(err.Error())
		}
		b.repo = repo
	}
	b.taskCtl = NewController(ControllerOptions{Scope: ScopeTask, Limits: t.opts.Settings.TaskBudget,
		Emit: t.emit, ParentToolCallID: call.ID})
	b.taskCtl.Start()
	defer b.taskCtl.Close()

	// Allocate ids and specs.
	t.mu.Lock()
	b.items = make([]ItemResult, len(p.Tasks))
	b.specs = make([]SubagentSpec, len(p.Tasks))
	b.progress = make([]ItemProgress, len(p.Tasks))
	var budget *Limits
	if sb := t.opts.Settings.SubagentBudget; sb.Any() {
		budget = &sb
	}
	for i, ts := range p.Tasks {
		id := fmt.Sprintf("%s%d-%s", t.opts.IDPrefix, t.next, ts.ID)
		t.next++
		b.specs[i] = SubagentSpec{ID: id, TaskID: ts.ID, Index: i, Description: ts.Description, Agent: agent,
			Assignment: buildAssignment(p.Context, ts.Assignment, p.Schema), Schema: p.Schema,
			Cwd: t.cwd(), Isolated: p.Isolated, Budget: budget, ParentToolCallID: call.ID}
		b.items[i] = ItemResult{Index: i, ID: id, TaskID: ts.ID, Agent: agent.Name, AgentSource: agent.Source,
			Description: ts.Description, Isolated: p.Isolated}
		b.progress[i] = ItemProgress{Index: i, ID: id, Agent: agent.Name, Status: "pending"}
	}
	t.mu.Unlock()

	b.update()
	sem := make(chan struct{}, t.opts.Settings.MaxConcurrency)
	var wg sync.WaitGroup
	// Items start in order, at most MaxConcurrency at a time.
	for i := range b.items {
		acquired := false
		select {
		case sem <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if acquired {
				defer func() { <-sem }()
			}
			b.items[i] = b.runItem(ctx, i)
			status := "completed"
			switch {
			case b.items[i].Aborted:
				status = "aborted"
			case b.items[i].ExitCode != 0:
				status = "failed"
			}
			b.setProgress(i, status)
		}(i)
	}
	wg.Wait()
	return b.finish(time.Since(start)), nil
}

func (t *Tool) projectAgentsDir() string {
	cwd := t.cwd()
	if cwd == "" {
		return ""
	}
	return ProjectAgentsDir(cwd)
}

// ParseParams decodes and checks the shape of the arguments.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return p, fmt.Errorf("Invalid arguments for task: expected a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return p, fmt.Errorf("Invalid arguments for task: %v", err)
	}
	present := func(k string) (json.RawMessage, bool) {
		v, ok := fields[k]
		if !ok || string(bytes.TrimSpace(v)) == "null" {
			return nil, false
		}
		return v, true
	}
	bad := func(name, want string) error {
		return fmt.Errorf("Invalid arguments for task: %q must be %s", name, want)
	}
	if v, ok := present("agent"); !ok || json.Unmarshal(v, &p.Agent) != nil || strings.TrimSpace(p.Agent) == "" {
		return p, bad("agent", "a string naming an agent")
	}
	p.Agent = strings.TrimSpace(p.Agent)
	if v, ok := present("context"); ok && json.Unmarshal(v, &p.Context) != nil {
		return p, bad("context", "a string")
	}
	if v, ok := present("schema"); ok {
		if bytes.TrimSpace(v)[0] != '{' {
			return p, bad("schema", "an object (a JTD schema)")
		}
		p.Schema = append(json.RawMessage(nil), bytes.TrimSpace(v)...)
	}
	if v, ok := present("isolated"); ok && json.Unmarshal(v, &p.Isolated) != nil {
		return p, bad("isolated", "a boolean")
	}
	if v, ok := present("verify"); ok {
		p.Verify = append(json.RawMessage(nil), bytes.TrimSpace(v)...)
	}
	if v, ok := present("tasks"); ok {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return p, bad("tasks", "an array of {id, description, assignment}")
		}
		for i, it := range items {
			var ts TaskSpec
			var f map[string]json.RawMessage
			if json.Unmarshal(it, &f) != nil {
				return p, fmt.Errorf("Invalid arguments for task: tasks[%d] must be an object {id, description, assignment}", i)
			}
			for _, k := range []struct {
				name string
				dst  *string
			}{{"id", &ts.ID}, {"description", &ts.Description}, {"assignment", &ts.Assignment}} {
				if v, ok := f[k.name]; ok && string(bytes.TrimSpace(v)) != "null" {
					if json.Unmarshal(v, k.dst) != nil {
						return p, fmt.Errorf("Invalid arguments for task: tasks[%d].%s must be a string", i, k.name)
					}
				}
			}
			ts.ID = strings.TrimSpace(ts.ID)
			p.Tasks = append(p.Tasks, ts)
		}
	}
	return p, nil
}

func validateTasks(tasks []TaskSpec) string {
	if len(tasks) == 0 {
		return "No tasks provided. Pass at least one {id, description, assignment} in tasks."
	}
	var missing, noAssignment, tooLong, dups []string
	seen := map[string]bool{}
	for i, ts := range tasks {
		switch {
		case ts.ID == "":
			missing = append(missing, fmt.Sprint(i))
		case len(ts.ID) > MaxTaskIDLength:
			tooLong = append(tooLong, ts.ID)
		default:
			key := strings.ToLower(ts.ID)
			if seen[key] {
				dups = append(dups, ts.ID)
			}
			seen[key] = true
		}
		if strings.TrimSpace(ts.Assignment) == "" {
			noAssignment = append(noAssignment, fmt.Sprint(i))
		}
	}
	var msgs []string
	if missing != nil {
		msgs = append(msgs, "Missing task ids at indexes: "+strings.Join(missing, ", "))
	}
	if tooLong != nil {
		msgs = append(msgs, fmt.Sprintf("Task ids longer than %d characters: %s", MaxTaskIDLength, strings.Join(tooLong, ", ")))
	}
	if dups != nil {
		msgs = append(msgs, "Duplicate task ids detected (case-insensitive): "+strings.Join(dups, ", "))
	}
	if noAssignment != nil {
		msgs = append(msgs, "Missing assignment at indexes: "+strings.Join(noAssignment, ", "))
	}
	if msgs == nil {
		return ""
	}
	return "Invalid tasks: " + strings.Join(msgs, "; ")
}

// buildAssignment is the subagent's first message.
func buildAssignment(sharedContext, assignment string, schema json.RawMessage) string {
	var b strings.Builder
	if c := strings.TrimSpace(sharedContext); c != "" {
		b.WriteString("# Background\n\n")
		b.WriteString(c)
		b.WriteString("\n\n# Your assignment\n\n")
	}
	b.WriteString(strings.TrimSpace(assignment))
	b.WriteString("\n\n# Finishing\n\nWhen you are done, call submit_result once with {\"result\": {\"data\": ...}}, or {\"result\": {\"error\": \"...\"}} if the assignment cannot be completed. Only what you submit is passed back.")
	if len(schema) > 0 {
		b.WriteString(" result.data must be JSON matching this JSON Type Definition (JTD) schema:\n\n```json\n")
		b.Write(schema)
		b.WriteString("\n```")
	}
	return b.String()
}

func (b *batch) setProgress(i int, status string) {
	b.progMu.Lock()
	b.progress[i].Status = status
	b.progMu.Unlock()
	b.update()
}

// update reports progress through tools.Call.OnUpdate.
func (b *batch) update() {
	if b.call.OnUpdate == nil {
		return
	}
	b.progMu.Lock()
	defer b.progMu.Unlock()
	done := 0
	for _, p := range b.progress {
		switch p.Status {
		case "completed", "failed", "aborted":
			done++
		}
	}
	text := fmt.Sprintf("Running %d agents... (%d done)", len(b.progress), done)
	if len(b.progress) == 1 {
		text = "Running 1 agent..."
	}
	prog := append([]ItemProgress(nil), b.progress...)
	b.call.OnUpdate(tools.Result{Content: []ai.Content{ai.Text(text)}, Details: jsonx.MustMarshal(Progress{Progress: prog})})
}

// budgetExceeded reports whether the session or task budget is exceeded.
func (b *batch) budgetExceeded() (bool, string) {
	if ok, r := b.t.opts.SessionBudget.Exceeded(); ok {
		return true, r
	}
	return b.taskCtl.Exceeded()
}

func (b *batch) account(o SubagentOutcome) {
	for _, c := range []*Controller{b.t.opts.SessionBudget, b.taskCtl} {
		c.AddUsage(o.Usage)
		c.AddToolCalls(o.ToolCalls)
	}
	b.t.mu.Lock()
	b.t.stats.Tokens += usageTokens(o.Usage)
	b.t.stats.Cost += o.Usage.Cost.Total
	b.t.mu.Unlock()
}

func usageTokens(u ai.Usage) int64 {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// spawn runs the subagent, turning a panic into a failure.
func (b *batch) spawn(ctx context.Context, spec SubagentSpec) (out SubagentOutcome) {
	defer func() {
		if r := recover(); r != nil {
			out = SubagentOutcome{ExitCode: 1, Error: fmt.Sprintf("The subagent crashed: %v", r)}
		}
	}()
	out = b.t.opts.Spawner.RunSubagent(ctx, spec)
	if out.Aborted && out.AbortReason == "" && ctx.Err() != nil {
		out.AbortReason = "cancelled"
	}
	if out.ExitCode == 0 && (out.Error != "" || out.Aborted) {
		out.ExitCode = 1
	}
	return out
}

// runItem runs one item to its resolution (subagent, verification and
// repairs, patch, cleanup) and emits its lifecycle events.
func (b *batch) runItem(ctx context.Context, i int) (res ItemResult) {
	res = b.items[i]
	spec := b.specs[i]
	start := time.Now()
	var wt *worktree
	started := false
	defer func() {
		if r := recover(); r != nil {
			res.ExitCode = 1
			res.Error = fmt.Sprintf("internal error in the task tool: %v", r)
		}
		wt.remove() // also after a failure or panic; a no-op when done already
		res.DurationMs = time.Since(start).Milliseconds()
		if started {
			b.t.mu.Lock()
			b.t.running--
			b.t.mu.Unlock()
			b.t.emit(&SubagentEndEvent{ID: res.ID, Agent: res.Agent, ExitCode: res.ExitCode,
				Verification: res.Verification, ParentToolCallID: spec.ParentToolCallID,
				Index: spec.Index, AgentSource: spec.Agent.Source, Aborted: res.Aborted})
		}
	}()

	if ctx.Err() != nil {
		res.ExitCode, res.Aborted, res.AbortReason = 1, true, "cancelled"
		res.Error = "Cancelled before the subagent started."
		return res
	}
	if ok, reason := b.budgetExceeded(); ok {
		res.ExitCode, res.Aborted, res.AbortReason = 1, true, AbortReasonBudgetExceeded
		res.Error = fmt.Sprintf("Budget exceeded (%s)", reason)
		return res
	}
	if b.repo != nil {
		var err error
		wt, err = b.repo.createWorktree(ctx, spec.ID)
		if err != nil {
			res.ExitCode = 1
			res.Error = err.Error()
			return res
		}
		spec.Cwd = wt.cwd
	}
	b.t.opts.SessionBudget.AddSubagent()
	b.taskCtl.AddSubagent()
	b.t.mu.Lock()
	b.t.stats.Count++
	b.t.running++
	b.t.mu.Unlock()
	b.setProgress(i, "running")
	b.t.emit(&SubagentStartEvent{ID: spec.ID, Agent: spec.Agent.Name, Isolated: spec.Isolated, ParentToolCallID: spec.ParentToolCallID,
		Index: spec.Index, AgentSource: spec.Agent.Source, Description: spec.Description, Assignment: spec.Assignment})
	started = true

	out := b.spawn(ctx, spec)
	b.account(out)
	total := out.Usage
	toolCalls := out.ToolCalls
	keepPatch := out.ExitCode == 0

	if b.plan != nil {
		v := &VerificationResult{Requested: true, Profile: b.plan.Profile, Mode: "command",
			Attempts: []VerificationAttemptResult{}, OnFailure: b.plan.OnFailure}
		if out.ExitCode != 0 {
			v.Status = VerifySkipped
		} else {
			b.setProgress(i, "verifying")
			out, keepPatch = b.verify(ctx, spec, out, v, &total, &toolCalls)
		}
		res.Verification = v
	}
	b.fill(&res, out, total, toolCalls)

	if wt != nil {
		if keepPatch {
			patch, err := wt.capturePatch()
			if err != nil {
				res.ExitCode = 1
				res.Error = joinErr(res.Error, err.Error())
			} else if patch != "" {
				b.storePatch(&res, patch)
			}
		}
		wt.remove()
	}
	return res
}

// verify runs the verification attempts and repairs of an item whose
// subagent exited 0. It returns the final outcome and whether the patch is
// kept.
func (b *batch) verify(ctx context.Context, spec SubagentSpec, out SubagentOutcome, v *VerificationResult, total *ai.Usage, toolCalls *int) (SubagentOutcome, bool) {
	env := attemptEnv{id: spec.ID, dir: spec.Cwd, artifactsDir: b.t.ArtifactsDir, shell: b.t.opts.Shell,
		emit: b.t.emit, budgetStop: b.budgetExceeded}
	fail := func(msg string) (SubagentOutcome, bool) {
		v.Status = VerifyFailed
		out.ExitCode = 1
		out.Error = msg
		return out, b.plan.OnFailure != OnFailureDiscardPatch
	}
	for attempt := 1; ; attempt++ {
		a, stopped := runAttempt(ctx, env, b.plan, attempt, spec.ParentToolCallID)
		v.Attempts = append(v.Attempts, a)
		if a.Status == VerifyPassed {
			v.Status = VerifyPassed
			return out, true
		}
		msg := verificationError(a)
		if stopped || ctx.Err() != nil {
			return fail(msg)
		}
		if v.RetriesUsed >= b.plan.MaxRetries {
			return fail(msg)
		}
		if ok, reason := b.budgetExceeded(); ok {
			return fail(fmt.Sprintf("%s. Budget exceeded (%s); repair skipped", msg, reason))
		}
		v.RetriesUsed++
		rspec := spec
		rspec.Repair = v.RetriesUsed
		rspec.Assignment = repairAssignment(spec.Assignment, a, b.t.opts.Settings.Verification.FailureContextLineLimit)
		r := b.spawn(ctx, rspec)
		b.account(r)
		total.Add(r.Usage)
		*toolCalls += r.ToolCalls
		if r.ExitCode != 0 {
			reason := r.Error
			if reason == "" {
				reason = fmt.Sprintf("exit code %d", r.ExitCode)
			}
			out.Aborted, out.AbortReason = r.Aborted, r.AbortReason
			return fail(fmt.Sprintf("%s; the repair run failed: %s", msg, reason))
		}
		// The repair's submission is the item's answer from now on.
		if len(r.Result) > 0 || r.Output != "" {
			out.Result, out.Output = r.Result, r.Output
		}
	}
}

func verificationError(a VerificationAttemptResult) string {
	if names := failedNames(a); len(names) > 0 {
		return "Verification failed: " + strings.Join(names, ", ")
	}
	if a.Error != "" {
		return "Verification failed: " + a.Error
	}
	return "Verification failed."
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// fill copies an outcome into the result, writing a long answer to the
// artifacts directory.
func (b *batch) fill(res *ItemResult, out SubagentOutcome, total ai.Usage, toolCalls int) {
	res.ExitCode = out.ExitCode
	res.Error = out.Error
	res.Aborted, res.AbortReason = out.Aborted, out.AbortReason
	res.Usage = total
	res.Tokens = usageTokens(total)
	res.ToolCalls = toolCalls
	text := outputText(out)
	if len(text) > maxInlineOutputBytes || strings.Count(text, "\n") >= maxInlineOutputLines {
		if dir, err := b.t.ArtifactsDir(); err == nil {
			path := filepath.Join(dir, sanitizeName(res.ID)+".md")
			if os.WriteFile(path, []byte(text), 0o644) == nil {
				res.OutputPath = path
			}
		}
		res.Output, res.Truncated = headOf(text, maxInlineOutputBytes, maxInlineOutputLines), true
		return
	}
	res.Output = text
	if len(out.Result) > 0 && json.Valid(out.Result) {
		res.Result = out.Result
	}
}

func outputText(out SubagentOutcome) string {
	r := bytes.TrimSpace(out.Result)
	if len(r) == 0 {
		return strings.TrimSpace(out.Output)
	}
	var s string
	if r[0] == '"' && json.Unmarshal(r, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Indent(&buf, r, "", "  ") == nil {
		return buf.String()
	}
	return string(r)
}

func headOf(s string, maxBytes, maxLines int) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
			if n >= maxLines {
				s = s[:i]
				break
			}
		}
	}
	if len(s) > maxBytes {
		s = s[:maxBytes]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1]
		}
		if len(s) > 0 && s[len(s)-1]&0x80 != 0 {
			s = s[:len(s)-1]
		}
	}
	return s
}

// storePatch writes the patch to the artifacts directory and inlines it
// when short.
func (b *batch) storePatch(res *ItemResult, patch string) {
	if dir, err := b.t.ArtifactsDir(); err == nil {
		path := filepath.Join(dir, sanitizeName(res.ID)+".patch")
		if err := os.WriteFile(path, []byte(patch), 0o644); err == nil {
			res.PatchPath = path
		} else {
			res.Error = joinErr(res.Error, "cannot write the patch: "+err.Error())
		}
	}
	if len(patch) <= maxInlinePatchBytes && strings.Count(patch, "\n") <= maxInlinePatchLines || res.PatchPath == "" {
		res.Patch = patch
	}
}

// finish builds the tool result.
func (b *batch) finish(elapsed time.Duration) tools.Result {
	var usage ai.Usage
	ok := 0
	for _, r := range b.items {
		usage.Add(r.Usage)
		if r.ExitCode == 0 {
			ok++
		}
	}
	d := Details{Results: b.items, TotalDurationMs: elapsed.Milliseconds(), Usage: &usage,
		ProjectAgentsDir: b.t.projectAgentsDir()}
	b.t.mu.Lock()
	d.ArtifactsDir = b.t.artifacts
	b.t.mu.Unlock()
	return tools.Result{
		Content: []ai.Content{ai.Text(renderSummary(b.items, elapsed))},
		Details: jsonx.MustMarshal(d),
		IsError: ok == 0,
	}
}

func statusLabel(r ItemResult) string {
	switch {
	case r.Aborted && r.AbortReason == AbortReasonBudgetExceeded:
		return "aborted (budget exceeded)"
	case r.Aborted:
		return "cancelled"
	case r.ExitCode == 0:
		return "completed"
	}
	return fmt.Sprintf("failed (exit %d)", r.ExitCode)
}

func renderSummary(items []ItemResult, elapsed time.Duration) string {
	ok := 0
	for _, r := range items {
		if r.ExitCode == 0 {
			ok++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<task-results>\n%d of %d task(s) completed in %.1fs.\n", ok, len(items), elapsed.Seconds())
	var patches []string
	for _, r := range items {
		kind := r.Agent
		if r.Isolated {
			kind += ", isolated"
		}
		fmt.Fprintf(&b, "\n## %s (%s): %s\n", r.ID, kind, statusLabel(r))
		if r.Error != "" {
			fmt.Fprintf(&b, "Error: %s\n", r.Error)
		}
		if r.Output != "" {
			b.WriteString("\n")
			b.WriteString(r.Output)
			b.WriteString("\n")
		}
		if r.Truncated {
			fmt.Fprintf(&b, "[output truncated; the full text is in %s]\n", r.OutputPath)
		}
		if v := r.Verification; v != nil {
			b.WriteString("\n")
			b.WriteString(renderVerification(v))
		}
		if r.Isolated {
			switch {
			case r.PatchPath != "" || r.Patch != "":
				files, add, del := patchStats(r.Patch)
				if r.Patch == "" && r.PatchPath != "" {
					if data, err := os.ReadFile(r.PatchPath); err == nil {
						files, add, del = patchStats(string(data))
					}
				}
				fmt.Fprintf(&b, "\nPatch: %d file(s), +%d -%d lines", files, add, del)
				if r.PatchPath != "" {
					fmt.Fprintf(&b, ", saved at %s", r.PatchPath)
					patches = append(patches, r.PatchPath)
				}
				b.WriteString(".\n")
				if r.Patch != "" {
					b.WriteString("```diff\n")
					b.WriteString(strings.TrimRight(r.Patch, "\n"))
					b.WriteString("\n```\n")
				}
			case r.Verification != nil && r.Verification.Status == VerifyFailed && r.Verification.OnFailure == OnFailureDiscardPatch:
				b.WriteString("\nPatch: discarded because verification failed.\n")
			case r.ExitCode == 0:
				b.WriteString("\nPatch: none (no changes).\n")
			default:
				b.WriteString("\nPatch: none (the task failed; its worktree was removed).\n")
			}
		}
	}
	if len(patches) > 0 {
		sort.Strings(patches)
		fmt.Fprintf(&b, "\nThe patches were not applied to your working tree. Review them, then apply with: git apply %s\n", strings.Join(patches, " "))
	}
	b.WriteString("</task-results>")
	return b.String()
}

func renderVerification(v *VerificationResult) string {
	var b strings.Builder
	name := "Verification"
	if v.Profile != "" {
		name += " (profile " + v.Profile + ")"
	}
	switch v.Status {
	case VerifySkipped:
		fmt.Fprintf(&b, "%s: skipped (the subagent did not succeed).\n", name)
		return b.String()
	case VerifyPassed:
		fmt.Fprintf(&b, "%s: passed", name)
	default:
		fmt.Fprintf(&b, "%s: %s", name, v.Status)
	}
	fmt.Fprintf(&b, " after %d attempt(s), %d repair(s).\n", len(v.Attempts), v.RetriesUsed)
	if len(v.Attempts) == 0 {
		return b.String()
	}
	last := v.Attempts[len(v.Attempts)-1]
	for _, c := range last.CommandResults {
		state := "ok"
		if c.ExitCode != 0 {
			state = fmt.Sprintf("exit %d", c.ExitCode)
			if c.TimedOut {
				state += ", timed out"
			}
			if c.Optional {
				state += ", optional"
			}
		}
		fmt.Fprintf(&b, "- %s: %s", c.Name, state)
		if c.ArtifactPath != "" {
			fmt.Fprintf(&b, " (log: %s)", c.ArtifactPath)
		}
		b.WriteString("\n")
		if c.ExitCode != 0 && c.OutputPreview != "" {
			b.WriteString("  ```\n")
			for _, line := range strings.Split(c.OutputPreview, "\n") {
				b.WriteString("  " + line + "\n")
			}
			b.WriteString("  ```\n")
		}
	}
	return b.String()
}

func patchStats(p string) (files, add, del int) {
	for _, line := range strings.Split(p, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			files++
		case strings.HasPrefix(line, "+++ ") || strings.HasPrefix(line, "--- "):
		case strings.HasPrefix(line, "+"):
			add++
		case strings.HasPrefix(line, "-"):
			del++
		}
	}
	return
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}
