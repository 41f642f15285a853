package core

import (
	"testing"

	"github.com/pisces-agent/pisces/internal/ai"
)

func TestOutputRate(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		output int64
		dur    *int64
		want   float64
		ok     bool
	}{
		{output: 50, dur: ms(500), want: 100, ok: true},
		{output: 30, dur: ms(2000), want: 15, ok: true},
		{output: 0, dur: ms(500)},
		{output: 50, dur: nil},
		{output: 50, dur: ms(99)},
	} {
		m := &ai.AssistantMessage{Usage: ai.Usage{Output: c.output}, DurationMs: c.dur}
		got, ok := OutputRate(m)
		if ok != c.ok || got != c.want {
			t.Errorf("OutputRate(output %d, duration %v) = %v, %v; want %v, %v", c.output, c.dur, got, ok, c.want, c.ok)
		}
	}
}
