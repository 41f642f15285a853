package task

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

// fixer writes "broken" on its first run and "fixed" on a repair run.
type fixer struct {
	mu    sync.Mutex
	specs []SubagentSpec
	fix   bool // whether the repair fixes the problem
}

func (f *fixer) RunSubagent(ctx context.Context, spec SubagentSpec) SubagentOutcome {
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	content := "broken\n"
	if spec.Repair > 0 && f.fix {
		content = "fixed\n"
	}
	if err := os.WriteFile(filepath.Join(spec.Cwd, "status.txt"), []byte(content), 0o644); err != nil {
		return SubagentOutcome{ExitCode: 1, Error: err.Error()}
	}
	answer := "first attempt"
	if spec.Repair > 0 {
		answer = "repaired"
	}
	return SubagentOutcome{Result: json.RawMessage(`"` + answer + `"`), Usage: ai.Usage{TotalTokens: 10}}
}

var checkStatus = map[string]any{"name": "status is fixed", "command": "echo checking; cat status.txt; grep -q fixed status.txt"}

func TestVerificationRepairedOnRetryPasses(t *testing.T) {
	repo := newRepo(t)
	rec := &recorder{}
	f := &fixer{fix: true}
	arts := t.TempDir()
	tool := New(Options{Spawner: f, Emit: rec.emit, Cwd: repo, Settings: verifySettings(), ArtifactsDir: arts})
	res, d := execute(t, tool, map[string]any{"agent": "task", "isolated": true,
		"verify": map[string]any{"commands": []any{checkStatus,
			map[string]any{"name": "optional lint", "command": "echo lint warning; exit 3", "optional": true}}},
		"tasks": []map[string]any{{"id": "MakeStatus", "description": "", "assignment": "Write status.txt."}}})
	r := d.Results[0]
	if res.IsError || r.ExitCode != 0 || r.Output != "repaired" || r.Error != "" {
		t.Fatalf("result: %+v\n%s", r, resultText(res))
	}
	v := r.Verification
	if v == nil || !v.Requested || v.Status != "passed" || v.RetriesUsed != 1 || len(v.Attempts) != 2 || v.Mode != "command" || v.OnFailure != "return_failure" {
		t.Fatalf("verification: %+v", v)
	}
	a1, a2 := v.Attempts[0], v.Attempts[1]
	if a1.Status != "failed" || a1.Error != "One or more verification commands failed." || a2.Status != "passed" || a2.Error != "" {
		t.Errorf("attempts: %+v", v.Attempts)
	}
	if a1.StartedAt == 0 || a1.EndedAt < a1.StartedAt || a2.StartedAt < a1.EndedAt {
		t.Errorf("times: %+v", v.Attempts)
	}
	c := a1.CommandResults[0]
	wantLog := filepath.Join(arts, "0-makestatus.verify.a1-1-status-is-fixed.log")
	if c.ExitCode != 1 || c.TimedOut || c.Optional || c.ArtifactPath != wantLog || c.OutputPreview != "checking\nbroken" {
		t.Errorf("command result: %+v", c)
	}
	if opt := a1.CommandResults[1]; !opt.Optional || opt.ExitCode != 3 {
		t.Errorf("optional: %+v", opt)
	}
	// The repair run: same id, same worktree, the failing output handed back.
	if len(f.specs) != 2 {
		t.Fatalf("runs: %d", len(f.specs))
	}
	first, repair := f.specs[0], f.specs[1]
	if repair.ID != first.ID || repair.Cwd != first.Cwd || repair.Repair != 1 || first.Repair != 0 {
		t.Errorf("repair spec: %+v", repair)
	}
	if !strings.Contains(repair.Assignment, "Write status.txt.") || !strings.Contains(repair.Assignment, "status is fixed (exit code 1)") ||
		!strings.Contains(repair.Assignment, "checking\nbroken") || strings.Contains(repair.Assignment, "lint warning") {
		t.Errorf("repair assignment:\n%s", repair.Assignment)
	}
	if r.Usage.TotalTokens != 20 {
		t.Errorf("usage of both runs: %+v", r.Usage)
	}
	if !strings.Contains(r.Patch, "+fixed") {
		t.Errorf("patch:\n%s", r.Patch)
	}
	// Event order on the stream.
	want := []string{
		"subagent_start",
		"subagent_verification_start", "subagent_verification_command_start", "subagent_verification_command_end",
		"subagent_verification_command_start", "subagent_verification_command_end", "subagent_verification_end",
		"subagent_verification_start", "subagent_verification_command_start", "subagent_verification_command_end",
		"subagent_verification_command_start", "subagent_verification_command_end", "subagent_verification_end",
		"subagent_end",
	}
	if got := rec.types(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events:\n%v", got)
	}
	wire := rec.wire(t)
	if wire[0] != `{"type":"subagent_start","id":"0-MakeStatus","agent":"task","isolated":true,"parentToolCallId":"call_1"}` {
		t.Errorf("start: %s", wire[0])
	}
	if wire[1] != `{"type":"subagent_verification_start","id":"0-MakeStatus","attempt":1,"parentToolCallId":"call_1"}` {
		t.Errorf("verification start: %s", wire[1])
	}
	if wire[2] != `{"type":"subagent_verification_command_start","id":"0-MakeStatus","attempt":1,"commandName":"status is fixed","parentToolCallId":"call_1"}` {
		t.Errorf("command start: %s", wire[2])
	}
	ce := eventsOf[*SubagentVerificationCommandEndEvent](rec.all())[0]
	if ce.ArtifactID != c.ArtifactPath || ce.ExitCode != 1 || ce.CommandName != "status is fixed" {
		t.Errorf("command end: %+v", ce)
	}
	ends := eventsOf[*SubagentVerificationEndEvent](rec.all())
	if ends[0].Status != "failed" || ends[1].Status != "passed" || ends[1].Attempt != 2 {
		t.Errorf("verification ends: %+v %+v", ends[0], ends[1])
	}
	end := eventsOf[*SubagentEndEvent](rec.all())[0]
	if end.ExitCode != 0 || end.Verification == nil || end.Verification.Status != "passed" || end.Verification.RetriesUsed != 1 {
		t.Errorf("end: %+v", end)
	}
	if !strings.Contains(wire[len(wire)-1], `"verification":{"requested":true,"mode":"command","status":"passed","attempts":[{"attempt":1,"status":"failed"`) {
		t.Errorf("end wire: %s", wire[len(wire)-1])
	}
	if !strings.Contains(wire[len(wire)-1], `"timedOut":false`) {
		t.Errorf("timedOut missing: %s", wire[len(wire)-1])
	}
	assertClean(t, repo)
}

func TestVerificationFailsWithDiscardPatch(t *testing.T) {
	repo := newRepo(t)
	rec := &recorder{}
	f := &fixer{}
	tool := New(Options{Spawner: f, Emit: rec.emit, Cwd: repo, Settings: verifySettings(), ArtifactsDir: t.TempDir()})
	res, d := execute(t, tool, map[string]any{"agent": "task", "isolated": true,
		"verify": map[string]any{"commands": []any{checkStatus}, "onFailure": "discard_patch", "maxRetries": 0},
		"tasks":  []map[string]any{{"id": "MakeStatus", "description": "", "assignment": "x"}}})
	r := d.Results[0]
	if r.ExitCode != 1 || r.PatchPath != "" || r.Patch != "" || r.Error != "Verification failed: status is fixed" {
		t.Fatalf("result: %+v", r)
	}
	if v := r.Verification; v.Status != "failed" || v.RetriesUsed != 0 || len(v.Attempts) != 1 || v.OnFailure != "discard_patch" {
		t.Errorf("verification: %+v", v)
	}
	if len(f.specs) != 1 {
		t.Errorf("a repair ran with maxRetries 0")
	}
	if !res.IsError || !strings.Contains(resultText(res), "discarded because verification failed") {
		t.Errorf("text:\n%s", resultText(res))
	}
	if end := eventsOf[*SubagentEndEvent](rec.all()); len(end) != 1 || end[0].ExitCode != 1 || end[0].Verification.Status != "failed" {
		t.Errorf("end: %+v", end)
	}
	assertClean(t, repo)
}

func TestVerificationReturnFailureKeepsPatchAfterFailedRepair(t *testing.T) {
	repo := newRepo(t)
	f := &fixer{fix: false}
	tool := New(Options{Spawner: f, Cwd: repo, Settings: verifySettings(), ArtifactsDir: t.TempDir()})
	_, d := execute(t, tool, map[string]any{"agent": "task", "isolated": true,
		"verify": map[string]any{"commands": []any{checkStatus}},
		"tasks":  []map[string]any{{"id": "MakeStatus", "description": "", "assignment": "x"}}})
	r := d.Results[0]
	if r.ExitCode != 1 || r.PatchPath == "" || !strings.Contains(r.Patch, "+broken") || r.Error != "Verification failed: status is fixed" {
		t.Fatalf("result: %+v", r)
	}
	if v := r.Verification; v.Status != "failed" || v.RetriesUsed != 1 || len(v.Attempts) != 2 {
		t.Errorf("verification: %+v", v)
	}
	assertClean(t, repo)
}

func TestRetryOnceIgnoresMaxRetriesZero(t *testing.T) {
	repo := newRepo(t)
	f := &fixer{fix: true}
	s := verifySettings()
	s.Verification.MaxRetries = 0
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: f, Cwd: repo, Settings: s})
	_, d := execute(t, tool, map[string]any{"agent": "task", "isolated": true,
		"verify": map[string]any{"commands": []any{checkStatus}, "onFailure": "retry_once"},
		"tasks":  []map[string]any{{"id": "MakeStatus", "description": "", "assignment": "x"}}})
	if v := d.Results[0].Verification; v.Status != "passed" || v.RetriesUsed != 1 {
		t.Errorf("verification: %+v", v)
	}
}

func TestVerificationSkippedWhenSubagentFails(t *testing.T) {
	repo := newRepo(t)
	rec := &recorder{}
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome {
		return SubagentOutcome{ExitCode: 1, Error: "no luck"}
	})
	s := verifySettings()
	s.Verification.DefaultProfile = "ci"
	s.Verification.Profiles = map[string]json.RawMessage{"ci": json.RawMessage(`{"mode":"command","commands":[{"name":"t","command":"true"}]}`)}
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Emit: rec.emit, Cwd: repo, Settings: s})
	_, d := execute(t, tool, map[string]any{"agent": "task", "isolated": true, "verify": true,
		"tasks": []map[string]any{{"id": "A", "description": "", "assignment": "x"}}})
	v := d.Results[0].Verification
	if v == nil || v.Status != "skipped" || v.Profile != "ci" || len(v.Attempts) != 0 || v.RetriesUsed != 0 || !v.Requested {
		t.Fatalf("verification: %+v", v)
	}
	if got := strings.Join(rec.types(), ","); got != "subagent_start,subagent_end" {
		t.Errorf("events: %s", got)
	}
	w := rec.wire(t)
	if !strings.Contains(w[1], `"verification":{"requested":true,"profile":"ci","mode":"command","status":"skipped","attempts":[],"retriesUsed":0,"onFailure":"return_failure"}`) {
		t.Errorf("end: %s", w[1])
	}
}

func TestRequireForIsolatedUsesDefaultProfile(t *testing.T) {
	repo := newRepo(t)
	rec := &recorder{}
	s := verifySettings()
	s.Verification.RequireForIsolated = true
	s.Verification.DefaultProfile = "ci"
	s.Verification.Profiles = map[string]json.RawMessage{"ci": json.RawMessage(`{"commands":[{"name":"ok","command":"true"}]}`)}
	sp := SpawnerFunc(func(ctx context.Context, spec SubagentSpec) SubagentOutcome { return submit("x") })
	tool := New(Options{ArtifactsDir: t.TempDir(), Spawner: sp, Emit: rec.emit, Cwd: repo, Settings: s})
	_, d := execute(t, tool, map[string]any{"agent": "task", "isolated": true,
		"tasks": []map[string]any{{"id": "A", "description": "", "assignment": "x"}}})
	v := d.Results[0].Verification
	if v == nil || v.Status != "passed" || v.Profile != "ci" {
		t.Fatalf("verification: %+v", v)
	}
	// A command with no output has no artifact.
	if c := v.Attempts[0].CommandResults[0]; c.ArtifactPath != "" || c.OutputPreview != "" {
		t.Errorf("command: %+v", c)
	}
	if !strings.Contains(rec.wire(t)[1], `"profile":"ci"`) {
		t.Errorf("verification start: %s", rec.wire(t)[1])
	}
	if ce := eventsOf[*SubagentVerificationCommandEndEvent](rec.all()); ce[0].ArtifactID != "" {
		t.Errorf("artifactId: %+v", ce[0])
	}
}

// The timeout (1.5 s: time enough for the shell to start and print on a
// busy machine) stops a command that would run for a minute.
func TestVerificationTimeout(t *testing.T) {
	dir := t.TempDir()
	plan := &verifyPlan{Commands: []VerifyCommand{{Name: "slow", Command: "echo started; sleep 60", TimeoutMs: 1500}}}
	env := attemptEnv{id: "0-A", dir: dir, artifactsDir: func() (string, error) { return dir, nil },
		emit: (&recorder{}).emit, budgetStop: func() (bool, string) { return false, "" }}
	a, stopped := runAttempt(context.Background(), env, plan, 1, "")
	c := a.CommandResults[0]
	if stopped || a.Status != "failed" || !c.TimedOut || c.ExitCode != 124 || c.DurationMs < 1500 || c.DurationMs > 30000 {
		t.Fatalf("%+v", a)
	}
	if !strings.HasPrefix(c.OutputPreview, "started") {
		t.Errorf("preview: %q", c.OutputPreview)
	}
}

func TestVerificationStoppedByBudget(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{}
	plan := &verifyPlan{Commands: []VerifyCommand{{Name: "a", Command: "true"}}}
	env := attemptEnv{id: "0-A", dir: dir, artifactsDir: func() (string, error) { return dir, nil },
		emit: rec.emit, budgetStop: func() (bool, string) { return true, "cost" }}
	a, stopped := runAttempt(context.Background(), env, plan, 1, "")
	if !stopped || a.Status != "failed" || !strings.Contains(a.Error, "Budget exceeded (cost)") || len(a.CommandResults) != 0 {
		t.Fatalf("%+v", a)
	}
	if e := eventsOf[*SubagentVerificationEndEvent](rec.all()); e[0].Status != "budget_exceeded" {
		t.Errorf("end: %+v", e[0])
	}
}

func TestResolveVerifyMerge(t *testing.T) {
	vs := VerificationSettings{Enabled: true, MaxRetries: 1, DefaultProfile: "",
		Profiles: map[string]json.RawMessage{"ci": json.RawMessage(`{"mode":"command","commands":[{"name":"typecheck","command":"go vet ./..."},{"name":"lint","command":"lint"}],"onFailure":"discard_patch","maxRetries":2}`)}}
	// Inline commands replace the profile's; other fields come from it.
	p, err := resolveVerify(json.RawMessage(`{"profile":"ci","commands":[{"name":"extra","command":"make lint"}]}`), true, vs)
	if err != nil {
		t.Fatal(err)
	}
	if p.Profile != "ci" || len(p.Commands) != 1 || p.Commands[0].Name != "extra" || p.OnFailure != "discard_patch" || p.MaxRetries != 2 {
		t.Errorf("%+v", p)
	}
	// Inline-only works with the default defaultProfile "".
	p, err = resolveVerify(json.RawMessage(`{"commands":[{"name":"t","command":"go test","timeoutMs":1000}]}`), true, vs)
	if err != nil || p.Profile != "" || p.OnFailure != "return_failure" || p.MaxRetries != 1 || p.Commands[0].TimeoutMs != 1000 {
		t.Errorf("%+v %v", p, err)
	}
	// A blank string means the default profile.
	vs.DefaultProfile = "ci"
	p, err = resolveVerify(json.RawMessage(`"  "`), true, vs)
	if err != nil || p.Profile != "ci" || len(p.Commands) != 2 {
		t.Errorf("%+v %v", p, err)
	}
	// mode none: not requested.
	p, err = resolveVerify(json.RawMessage(`{"mode":"none"}`), true, vs)
	if err != nil || p != nil {
		t.Errorf("%+v %v", p, err)
	}
	// Absent without requireForIsolated: not requested.
	if p, err := resolveVerify(nil, true, vs); p != nil || err != nil {
		t.Errorf("%+v %v", p, err)
	}
	// Absent on a non-isolated call with requireForIsolated: not requested.
	vs.RequireForIsolated = true
	if p, err := resolveVerify(nil, false, vs); p != nil || err != nil {
		t.Errorf("%+v %v", p, err)
	}
}

func TestPreview(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, strings.Repeat("x", 10)+string(rune('a'+i%26)))
	}
	p := preview(strings.Join(lines, "\n") + "\n\n")
	if got := strings.Count(p, "\n") + 1; got != 20 || !strings.HasSuffix(p, lines[29]) || !strings.HasPrefix(p, lines[10]) {
		t.Errorf("lines: %d %q", got, p)
	}
	long := strings.Repeat("y", 10000)
	if p := preview("start\n" + long); len(p) != 4096 {
		t.Errorf("bytes: %d", len(p))
	}
	if sanitizeName("Has Hello2!") != "has-hello2" || sanitizeName("///") != "cmd" {
		t.Error(sanitizeName("Has Hello2!"))
	}
}

func TestRepairAssignmentLineLimit(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "x.log")
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("z", i%7))
		b.WriteString("\n")
	}
	write(t, log, b.String())
	a := VerificationAttemptResult{Attempt: 1, CommandResults: []VerificationCommandResult{
		{Name: "tests", Command: "go test", ExitCode: 1, ArtifactPath: log},
		{Name: "quiet", Command: "false", ExitCode: 1},
	}}
	text := repairAssignment("ORIGINAL", a, 200)
	if !strings.HasPrefix(text, "ORIGINAL") || !strings.Contains(text, "Output (last 200 lines)") || !strings.Contains(text, "## quiet (exit code 1)") || !strings.Contains(text, "(no output)") {
		t.Errorf("%s", text)
	}
	if n := strings.Count(text, "line "); n != 200 {
		t.Errorf("lines: %d", n)
	}
}
