package anthropic

import (
	"encoding/json"
	"github.com/pisces-agent/pisces/internal/ai"
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

// retryAfter is the shared Retry-After reading.
var retryAfter = ai.RetryAfter
