package anthropic

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// nowFunc is the clock used for HTTP-date Retry-After values (tests replace it).
var nowFunc = time.Now

// errorBody reads Anthropic's error envelope
// {"type":"error","error":{"type":"...","message":"..."}}.
func errorBody(raw []byte) (typ, msg string) {
	var env struct {
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return "", ""
	}
	if env.Error != nil {
		return env.Error.Type, env.Error.Message
	}
	return "", env.Message
}

// retryAfter reads retry-after-ms, then Retry-After (seconds or an HTTP
// date). It returns 0 when neither gives a usable delay.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
