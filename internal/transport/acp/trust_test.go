package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/pisces-agent/pisces/internal/resources"
)

// hasCommand reports an available_commands_update naming name.
func hasCommand(ups []sdk.SessionNotification, name string) bool {
	for _, u := range ups {
		if c := u.Update.AvailableCommandsUpdate; c != nil {
			for _, cmd := range c.AvailableCommands {
				if cmd.Name == name {
					return true
				}
			}
		}
	}
	return false
}

// TestTrustQuestionElicited: with a client that advertises form
// elicitation, a project with resources of its own that nobody decided
// about is asked about with elicitation/create; accept trusts it (its
// prompt template is announced, the answer remembered in trust.json),
// decline does not (remembered too).
func TestTrustQuestionElicited(t *testing.T) {
	for _, tc := range []struct {
		action string
		trust  bool
	}{{"accept", true}, {"decline", false}} {
		t.Run(tc.action, func(t *testing.T) {
			r := startInProcess(t, "", `{"turns":[]}`)
			prompts := filepath.Join(r.proj, ".pisces", "prompts")
			if err := os.MkdirAll(prompts, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(prompts, "projectcmd.md"), []byte("Do the project thing"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.ed.mu.Lock()
			r.ed.elicit = func(sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse {
				if tc.action == "accept" {
					return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: "accept"}}
				}
				return sdk.UnstableCreateElicitationResponse{Decline: &sdk.UnstableCreateElicitationDecline{Action: "decline"}}
			}
			r.ed.mu.Unlock()
			if _, err := r.conn.Initialize(r.ctx(), sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{
				Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}}}}); err != nil {
				t.Fatal(err)
			}
			id := r.newSession("")
			store := resources.NewTrustStore(r.agent)
			if tc.trust {
				r.ed.waitFor(t, "the project's command", func(ups []sdk.SessionNotification) bool { return hasCommand(ups, "projectcmd") })
			} else {
				r.ed.waitFor(t, "the note about the answer", func(ups []sdk.SessionNotification) bool {
					return strings.Contains(text(ups, "agent_message_chunk"), "is not trusted: its own Pisces resources")
				})
			}
			r.ed.mu.Lock()
			asked := append([]sdk.UnstableCreateElicitationRequest(nil), r.ed.elicited...)
			r.ed.mu.Unlock()
			if len(asked) != 1 || asked[0].Form == nil || !strings.Contains(asked[0].Form.Message, "Trust this project?") || !strings.Contains(asked[0].Form.Message, r.proj) {
				t.Fatalf("elicitations %+v", asked)
			}
			// The prompt after the answer runs under it.
			if stop := r.prompt(id, "/projectcmd"); stop != sdk.StopReasonEndTurn && tc.trust {
				t.Errorf("stopReason %s", stop)
			}
			e, ok := store.Get(r.proj)
			if !ok || e.Trusted != tc.trust {
				t.Errorf("trust.json has %+v (%v), want trusted=%v", e, ok, tc.trust)
			}
			ups := r.ed.snapshot()
			if hasCommand(ups, "projectcmd") != tc.trust {
				t.Errorf("project command announced: %v, want %v", hasCommand(ups, "projectcmd"), tc.trust)
			}
			if strings.Contains(text(ups, "agent_message_chunk"), "they are not loaded because the project is not trusted") {
				t.Error("the note for clients that cannot be asked was shown")
			}
		})
	}
}
