package task

import (
	"encoding/json"

	"github.com/pisces-agent/pisces/internal/tools"
)

func toolsCall(args json.RawMessage, onProgress func(Progress)) tools.Call {
	return tools.Call{ID: "call_1", Args: args, OnUpdate: func(r tools.Result) {
		var p Progress
		_ = json.Unmarshal(r.Details, &p)
		onProgress(p)
	}}
}
