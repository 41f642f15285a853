package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestStopReason(t *testing.T) {
	for _, c := range []struct {
		stop, raw string
		want      sdk.StopReason
	}{
		{"stop", "end_turn", sdk.StopReasonEndTurn},
		{"toolUse", "tool_use", sdk.StopReasonEndTurn},
		{"length", "max_tokens", sdk.StopReasonMaxTokens},
		{"aborted", "", sdk.StopReasonCancelled},
		{"error", "refusal", sdk.StopReasonRefusal},
		{"error", "content_filter", sdk.StopReasonRefusal},
		{"error", "SAFETY", sdk.StopReasonRefusal},
		{"error", "", sdk.StopReasonEndTurn},
	} {
		if got := stopReason(c.stop, c.raw); got != c.want {
			t.Errorf("stopReason(%q, %q) = %s, want %s", c.stop, c.raw, got, c.want)
		}
	}
}
