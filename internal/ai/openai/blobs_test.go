package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
)

// A request with long strings (a huge prompt, tool output, an image, long
// tool arguments and thinking) sends the same JSON as the SDK would encode
// for it, with a correct Content-Length; the long strings never pass
// through the SDK's encoder.
func TestCompletionsLongStringsSpliced(t *testing.T) {
	srv := newServer(t, serveSSE(t, "completions_text.sse"))
	model := testModel(APICompletions, srv.URL+"/v1")
	long := func(seed string) string {
		return strings.Repeat(seed+` "quoted" <tag> & back\slash é 😀 `+"\n\t\x01\u2028", blobMin/40+1) + "\xff end"
	}
	user, tool, args, think := long("user"), long("tool"), `{"content":`+strconv.Quote(long("args"))+`}`, long("think")
	img := ai.Image(strings.Repeat("iVBORw0KGgo=", blobMin/12+1), "image/png")
	msgs := []ai.Message{
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.BlockContent(ai.Text(user), img)},
		&ai.AssistantMessage{Role: ai.RoleAssistant, API: APICompletions, Provider: "openai", Model: "gpt-test", StopReason: ai.StopToolUse,
			Content: []ai.Content{
				{Type: ai.ContentThinking, Thinking: think, ThinkingSignature: "reasoning_content"},
				ai.Text(long("said")),
				{Type: ai.ContentToolCall, ID: "call_1", Name: "write", Arguments: json.RawMessage(args)},
			}},
		&ai.ToolResultMessage{Role: ai.RoleToolResult, ToolCallID: "call_1", ToolName: "write", Content: []ai.Content{ai.Text(tool), ai.Text("short")}},
		&ai.UserMessage{Role: ai.RoleUser, Content: ai.StringContent(long("again"))},
	}
	req := &ai.Request{Model: model, SystemPrompt: long("system"), Messages: msgs}
	bl := newBlobs()
	completionsParamsWith(req, resolveCompat(model), bl)
	// system, user text, image, assistant text, reasoning, arguments, tool
	// output, the last prompt
	if len(bl.parts) != 8 {
		t.Fatalf("%d long strings taken out of the SDK's body, want 8", len(bl.parts))
	}
	NewCompletions(nil).Stream(withTimeout(t), req, func(ai.AssistantEvent) {})
	got := srv.only(t)
	if got.Body == nil {
		t.Fatalf("the body is not JSON: %.200q", got.Raw)
	}
	if cl := got.Header.Get("Content-Length"); cl != strconv.Itoa(len(got.Raw)) {
		t.Fatalf("Content-Length %s, body %d bytes", cl, len(got.Raw))
	}
	want := paramsJSON(t, completionsParams(req, resolveCompat(model)))
	want["stream"] = true
	if !reflect.DeepEqual(got.Body, want) {
		for k := range want {
			if !reflect.DeepEqual(got.Body[k], want[k]) {
				t.Errorf("member %q differs", k)
			}
		}
		t.Fatal("the spliced body differs from the SDK's")
	}
	if strings.Contains(string(got.Raw), "pisces-blob-") {
		t.Fatal("a placeholder reached the server")
	}
}

// A huge prompt reaches the server without the SDK's encoder copying it:
// sending it allocates a small fraction of its size (it was 20 times it).
func TestCompletionsHugePromptNotCopied(t *testing.T) {
	const size = 8 << 20
	sse := fixture(t, "completions_text.sse")
	var got int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}))
	defer srv.Close()
	model := testModel(APICompletions, srv.URL+"/v1")
	const unit = "a line of a huge prompt, \"quoted\" and <tagged>\n"
	req := userReq(model, strings.Repeat(unit, size/len(unit)+1)[:size])
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// 8 MB through the race detector takes 14 s on an idle 2-core machine:
	// the deadline is for a hang, not a measure of speed.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	msg := NewCompletions(nil).Stream(ctx, req, func(ai.AssistantEvent) {})
	runtime.ReadMemStats(&after)
	if msg.StopReason != ai.StopStop {
		t.Fatalf("stop %q: %s", msg.StopReason, msg.ErrorMessage)
	}
	if got < size {
		t.Fatalf("the server read %d bytes", got)
	}
	n := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d kB allocated to send a %d MB prompt", n>>10, size>>20)
	if n > size/2 {
		t.Fatalf("%d MB allocated to send a %d MB prompt", n>>20, size>>20)
	}
}
