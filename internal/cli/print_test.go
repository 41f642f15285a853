package cli

import "testing"

func TestRetryDelayText(t *testing.T) {
	for ms, want := range map[int64]string{0: "0s", 10: "10ms", 500: "500ms", 999: "999ms", 1000: "1s", 1500: "1.5s", 2000: "2s", 8049: "8s", 60000: "1m0s"} {
		if got := retryDelayText(ms); got != want {
			t.Errorf("retryDelayText(%d) = %q, want %q", ms, got, want)
		}
	}
}
