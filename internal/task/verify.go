package task

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pisces-agent/pisces/internal/procgroup"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/rpc"
)

// onFailure policies.
const (
	OnFailureReturnFailure = "return_failure"
	OnFailureDiscardPatch  = "discard_patch"
	OnFailureRetryOnce     = "retry_once"
)

// Verification statuses (VerificationResult.Status; attempts use passed,
// failed and skipped).
const (
	VerifyNotRequested = "not_requested"
	VerifyPassed       = "passed"
	VerifyFailed       = "failed"
	VerifySkipped      = "skipped"
	// VerifyBudgetExceeded appears only in subagent_verification_end.
	VerifyBudgetExceeded = "budget_exceeded"
)

// Preview limits of VerificationCommandResult.OutputPreview.
const (
	previewLines = 20
	previewBytes = 4096
)

// VerificationResult is the outcome of an item's verification. It is absent
// from results when verification was not requested.
type VerificationResult struct {
	Requested   bool                        `json:"requested"`
	Profile     string                      `json:"profile,omitempty"`
	Mode        string                      `json:"mode,omitempty"` // "command"
	Status      string                      `json:"status"`
	Attempts    []VerificationAttemptResult `json:"attempts"`
	RetriesUsed int                         `json:"retriesUsed"`
	OnFailure   string                      `json:"onFailure,omitempty"`
}

// VerificationAttemptResult is one run of the verification commands.
type VerificationAttemptResult struct {
	Attempt        int                         `json:"attempt"`
	Status         string                      `json:"status"`
	StartedAt      int64                       `json:"startedAt"` // epoch ms
	EndedAt        int64                       `json:"endedAt"`   // epoch ms
	CommandResults []VerificationCommandResult `json:"commandResults"`
	Error          string                      `json:"error,omitempty"`
}

// VerificationCommandResult is one command of an attempt.
type VerificationCommandResult struct {
	Name       string `json:"name"`
	Command    string `json:"command"`
	ExitCode   int    `json:"exitCode"`
	DurationMs int64  `json:"durationMs"`
	Optional   bool   `json:"optional,omitempty"`
	TimedOut   bool   `json:"timedOut"`
	// ArtifactPath is the log of the command's combined output; absent when
	// it printed nothing.
	ArtifactPath string `json:"artifactPath,omitempty"`
	// OutputPreview is the end of the combined output: the last 20 lines,
	// then at most the last 4 KB of those.
	OutputPreview string `json:"outputPreview,omitempty"`
}

// VerifyCommand is one verification command as configured.
type VerifyCommand struct {
	Name      string  `json:"name"`
	Command   string  `json:"command"`
	TimeoutMs float64 `json:"timeoutMs,omitempty"`
	Optional  bool    `json:"optional,omitempty"`
}

// VerifyConfig is a verification profile or the object form of verify.
// Absent fields are nil; an inline config overrides its profile field by
// field, and inline commands replace the profile's.
type VerifyConfig struct {
	Profile        *string          `json:"profile,omitempty"`
	Mode           *string          `json:"mode,omitempty"`
	Commands       *[]VerifyCommand `json:"commands,omitempty"`
	LspDiagnostics *bool            `json:"lspDiagnostics,omitempty"`
	MaxRetries     *float64         `json:"maxRetries,omitempty"`
	OnFailure      *string          `json:"onFailure,omitempty"`
}

// verifyPlan is a resolved verification request.
type verifyPlan struct {
	Profile    string
	Commands   []VerifyCommand
	MaxRetries int // repairs allowed before onFailure applies
	OnFailure  string
}

// Resolution errors (the model sees them).
var (
	errVerifyNotIsolated = errors.New("Verification requires isolated task execution. Pass isolated: true or disable verify.")
	errVerifyDisabled    = errors.New("Task verification is disabled (task.verification.enabled is false). Remove verify or enable the setting.")
	errVerifyNothing     = errors.New("Verification requested but no verification profile or commands were provided.")
	errVerifyNoCommands  = errors.New("Verification requires at least one command. Provide verify.commands or configure task.verification.profiles.")
	errVerifyLSP         = errors.New("LSP-based task verification is not implemented yet. Use command checks for now.")
)

// resolveVerify turns the verify argument (nil when absent) into a plan, or
// nil when verification is not requested.
func resolveVerify(raw json.RawMessage, isolated bool, vs VerificationSettings) (*verifyPlan, error) {
	raw = bytes.TrimSpace(raw)
	absent := len(raw) == 0 || string(raw) == "null"
	if absent {
		if isolated && vs.Enabled && vs.RequireForIsolated {
			return buildPlan(vs.DefaultProfile, nil, vs)
		}
		return nil, nil
	}
	if string(raw) == "false" {
		return nil, nil
	}
	var inline *VerifyConfig
	profile := ""
	switch raw[0] {
	case 't':
		if string(raw) != "true" {
			return nil, errors.New("verify must be a boolean, a profile name or an object")
		}
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("verify: %v", err)
		}
		profile = strings.TrimSpace(s)
	case '{':
		inline = &VerifyConfig{}
		if err := json.Unmarshal(raw, inline); err != nil {
			return nil, fmt.Errorf("Invalid verify object: %v", err)
		}
		if inline.Profile != nil {
			profile = strings.TrimSpace(*inline.Profile)
		}
	default:
		return nil, errors.New("verify must be a boolean, a profile name or an object")
	}
	if !isolated {
		return nil, errVerifyNotIsolated
	}
	if !vs.Enabled {
		return nil, errVerifyDisabled
	}
	if profile == "" {
		profile = vs.DefaultProfile
	}
	return buildPlan(profile, inline, vs)
}

func buildPlan(profile string, inline *VerifyConfig, vs VerificationSettings) (*verifyPlan, error) {
	var base VerifyConfig
	if profile != "" {
		raw, ok := vs.Profiles[profile]
		if !ok || len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '{' || json.Unmarshal(raw, &base) != nil {
			return nil, fmt.Errorf("Unknown or invalid verification profile %q.", profile)
		}
	} else if inline == nil || inline.Commands == nil {
		return nil, errVerifyNothing
	}
	merged := base
	if inline != nil {
		if inline.Mode != nil {
			merged.Mode = inline.Mode
		}
		if inline.Commands != nil {
			merged.Commands = inline.Commands
		}
		if inline.LspDiagnostics != nil {
			merged.LspDiagnostics = inline.LspDiagnostics
		}
		if inline.MaxRetries != nil {
			merged.MaxRetries = inline.MaxRetries
		}
		if inline.OnFailure != nil {
			merged.OnFailure = inline.OnFailure
		}
	}
	if merged.Mode != nil {
		switch *merged.Mode {
		case "none":
			return nil, nil
		case "command", "":
		case "lsp", "profile":
			return nil, errVerifyLSP
		default:
			return nil, fmt.Errorf("Unknown verification mode %q. Use \"command\" or \"none\".", *merged.Mode)
		}
	}
	if merged.LspDiagnostics != nil && *merged.LspDiagnostics {
		return nil, errVerifyLSP
	}
	plan := &verifyPlan{Profile: profile, OnFailure: OnFailureReturnFailure, MaxRetries: vs.MaxRetries}
	if merged.OnFailure != nil && *merged.OnFailure != "" {
		switch *merged.OnFailure {
		case OnFailureReturnFailure, OnFailureDiscardPatch, OnFailureRetryOnce:
			plan.OnFailure = *merged.OnFailure
		default:
			return nil, fmt.Errorf("Invalid verify onFailure %q. Use return_failure, discard_patch or retry_once.", *merged.OnFailure)
		}
	}
	if merged.MaxRetries != nil {
		plan.MaxRetries = int(*merged.MaxRetries)
	}
	if plan.MaxRetries < 0 {
		plan.MaxRetries = 0
	}
	if plan.OnFailure == OnFailureRetryOnce {
		plan.MaxRetries = 1
	}
	if merged.Commands != nil {
		for _, c := range *merged.Commands {
			c.Name, c.Command = strings.TrimSpace(c.Name), strings.TrimSpace(c.Command)
			if c.Name == "" || c.Command == "" {
				continue
			}
			plan.Commands = append(plan.Commands, c)
		}
	}
	if len(plan.Commands) == 0 {
		return nil, errVerifyNoCommands
	}
	return plan, nil
}

// attemptEnv is what one verification attempt needs.
type attemptEnv struct {
	id           string // unique item id
	dir          string // where the commands run (the worktree)
	artifactsDir func() (string, error)
	shell        string
	emit         func(ev rpc.Event)
	budgetStop   func() (bool, string) // reports an exceeded budget
}

// runAttempt runs every command of plan in order (no early stop) and
// returns the attempt and whether a budget stopped it.
func runAttempt(ctx context.Context, env attemptEnv, plan *verifyPlan, attempt int, parent string) (VerificationAttemptResult, bool) {
	res := VerificationAttemptResult{Attempt: attempt, StartedAt: time.Now().UnixMilli(), CommandResults: []VerificationCommandResult{}}
	env.emit(&SubagentVerificationStartEvent{ID: env.id, Attempt: attempt, Profile: plan.Profile, ParentToolCallID: parent})
	budgetStopped := false
	var failed []string
	for i, c := range plan.Commands {
		if stop, reason := env.budgetStop(); stop {
			budgetStopped = true
			res.Error = fmt.Sprintf("Budget exceeded (%s); verification stopped", reason)
			break
		}
		if ctx.Err() != nil {
			res.Error = "Verification cancelled"
			break
		}
		env.emit(&SubagentVerificationCommandStartEvent{ID: env.id, Attempt: attempt, CommandName: c.Name, ParentToolCallID: parent})
		cr := runVerifyCommand(ctx, env, c, attempt, i+1)
		env.emit(&SubagentVerificationCommandEndEvent{ID: env.id, Attempt: attempt, CommandName: c.Name,
			ExitCode: cr.ExitCode, DurationMs: cr.DurationMs, ArtifactID: cr.ArtifactPath, ParentToolCallID: parent})
		res.CommandResults = append(res.CommandResults, cr)
		if cr.ExitCode != 0 && !c.Optional {
			failed = append(failed, c.Name)
		}
	}
	res.EndedAt = time.Now().UnixMilli()
	status := VerifyPassed
	switch {
	case budgetStopped || res.Error != "":
		res.Status = VerifyFailed
		status = VerifyFailed
		if budgetStopped {
			status = VerifyBudgetExceeded
		}
	case len(failed) > 0:
		res.Status = VerifyFailed
		status = VerifyFailed
		res.Error = "One or more verification commands failed."
	default:
		res.Status = VerifyPassed
	}
	env.emit(&SubagentVerificationEndEvent{ID: env.id, Attempt: attempt, Status: status, ParentToolCallID: parent})
	return res, budgetStopped
}

func runVerifyCommand(ctx context.Context, env attemptEnv, c VerifyCommand, attempt, index int) (cr VerificationCommandResult) {
	cr = VerificationCommandResult{Name: c.Name, Command: c.Command, Optional: c.Optional}
	start := time.Now()
	defer func() { cr.DurationMs = time.Since(start).Milliseconds() }() // on the named result

	dir, err := env.artifactsDir()
	var out *os.File
	if err == nil {
		path := filepath.Join(dir, fmt.Sprintf("%s.verify.a%d-%d-%s.log", sanitizeName(env.id), attempt, index, sanitizeName(c.Name)))
		out, err = os.Create(path)
	}
	if err != nil {
		// No place for the log: keep the output in a temporary file.
		out, err = os.CreateTemp("", "pisces-verify-*.log")
		if err != nil {
			cr.ExitCode = 1
			cr.OutputPreview = "cannot create an output file: " + err.Error()
			return cr
		}
	}
	timeout := time.Duration(c.TimeoutMs * float64(time.Millisecond))
	cr.ExitCode, cr.TimedOut = runShell(ctx, env.shell, env.dir, c.Command, timeout, out)
	path := out.Name()
	out.Close()
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		cr.ArtifactPath = path
		cr.OutputPreview = preview(readTail(path, 256*1024))
	} else {
		os.Remove(path)
	}
	return cr
}

// runShell runs command with the shell in dir, writing combined output to
// out. It returns the exit code (124 on timeout, 128+signal when killed).
func runShell(ctx context.Context, shell, dir, command string, timeout time.Duration, out *os.File) (int, bool) {
	if shell == "" {
		shell = defaultShell()
	}
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Stdin = nil
	procgroup.Set(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "cannot start %s: %v\n", shell, err)
		return 127, false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	timedOut := false
	var err error
	select {
	case err = <-done:
	case <-timer:
		timedOut = true
		procgroup.Kill(cmd)
		err = <-done
	case <-ctx.Done():
		procgroup.Kill(cmd)
		err = <-done
	}
	if timedOut {
		fmt.Fprintf(out, "\n[timed out after %d ms]\n", timeout.Milliseconds())
		return 124, true
	}
	if err == nil {
		return 0, false
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			return code, false
		}
		if sig := procgroup.SignalNumber(ee); sig > 0 {
			return 128 + sig, false
		}
	}
	return 1, false
}

func defaultShell() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "sh"
}

// readTail returns up to the last max bytes of a file.
func readTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// preview keeps the last 20 lines of s, then at most its last 4 KB.
func preview(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	s = lastLines(s, previewLines)
	if len(s) > previewBytes {
		s = s[len(s)-previewBytes:]
		// Do not start inside a UTF-8 sequence.
		for len(s) > 0 && s[0]&0xC0 == 0x80 {
			s = s[1:]
		}
	}
	return s
}

func lastLines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	idx := len(s)
	for i := 0; i < n; i++ {
		j := strings.LastIndexByte(s[:idx], '\n')
		if j < 0 {
			return s
		}
		idx = j
	}
	return s[idx+1:]
}

// sanitizeName makes s safe as part of a file name.
func sanitizeName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_'
		if !ok {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(r)
		dash = false
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 60 {
		out = strings.Trim(out[:60], "-.")
	}
	if out == "" {
		out = "cmd"
	}
	return out
}

// repairAssignment is the prompt of a repair run: the original assignment
// and, for each failed required command, the end of its output.
func repairAssignment(original string, attempt VerificationAttemptResult, lineLimit int) string {
	var b strings.Builder
	b.WriteString(original)
	b.WriteString("\n\n---\n\n# Verification failed\n\n")
	fmt.Fprintf(&b, "After you finished, the project's verification commands ran in your working directory (attempt %d) and did not all pass. ", attempt.Attempt)
	b.WriteString("Your changes are still in place. Find the cause and fix the code so that the commands below pass. ")
	b.WriteString("Do not weaken, skip or edit the checks themselves. When they pass, call submit_result again with an updated report.\n")
	if attempt.Error != "" && len(attempt.CommandResults) == 0 {
		fmt.Fprintf(&b, "\n%s\n", attempt.Error)
	}
	for _, c := range attempt.CommandResults {
		if c.ExitCode == 0 || c.Optional {
			continue
		}
		fmt.Fprintf(&b, "\n## %s (exit code %d", c.Name, c.ExitCode)
		if c.TimedOut {
			b.WriteString(", timed out")
		}
		fmt.Fprintf(&b, ")\n\nCommand: `%s`\n\n", c.Command)
		out := ""
		if c.ArtifactPath != "" {
			out = strings.TrimRight(readTail(c.ArtifactPath, 1<<20), " \t\r\n")
		}
		if out == "" {
			b.WriteString("(no output)\n")
			continue
		}
		tail := lastLines(out, lineLimit)
		if tail != out {
			fmt.Fprintf(&b, "Output (last %d lines):\n", lineLimit)
		} else {
			b.WriteString("Output:\n")
		}
		b.WriteString("```\n")
		b.WriteString(tail)
		b.WriteString("\n```\n")
	}
	return b.String()
}

// failedNames lists the failed required commands of an attempt.
func failedNames(a VerificationAttemptResult) []string {
	var out []string
	for _, c := range a.CommandResults {
		if c.ExitCode != 0 && !c.Optional {
			out = append(out, c.Name)
		}
	}
	return out
}
