package rpcmode

import (
	"fmt"

	"github.com/pisces-agent/pisces/internal/fetch"
	"github.com/pisces-agent/pisces/rpc"
)

// field kinds for validation.
const (
	kString = "string"
	kBool   = "boolean"
	kArray  = "array"
	kObject = "object"
	kNumber = "number"
)

type fieldSpec struct {
	name     string
	kind     string
	required bool
	enum     []string
}

// commandFields lists the typed fields of each command; a missing required
// field or a field of the wrong type is an error naming it.
var commandFields = map[string][]fieldSpec{
	rpc.CmdPrompt: {
		{name: "message", kind: kString, required: true},
		{name: "images", kind: kArray},
		{name: "streamingBehavior", kind: kString, enum: []string{"steer", "followUp"}},
	},
	rpc.CmdSteer:          {{name: "message", kind: kString, required: true}, {name: "images", kind: kArray}},
	rpc.CmdFollowUp:       {{name: "message", kind: kString, required: true}, {name: "images", kind: kArray}},
	rpc.CmdQueueMessage:   {{name: "message", kind: kString, required: true}, {name: "images", kind: kArray}},
	rpc.CmdAbortAndPrompt: {{name: "message", kind: kString, required: true}, {name: "images", kind: kArray}},
	rpc.CmdNewSession:     {{name: "parentSession", kind: kString}, {name: "cwd", kind: kString}},
	rpc.CmdListDirectory:  {{name: "path", kind: kString}},
	rpc.CmdSetModel:       {{name: "provider", kind: kString, required: true}, {name: "modelId", kind: kString, required: true}},
	rpc.CmdSetThinkingLevel: {{name: "level", kind: kString, required: true,
		enum: []string{"off", "minimal", "low", "medium", "high", "xhigh", "max"}}},
	rpc.CmdSetSteeringMode:   {{name: "mode", kind: kString, required: true, enum: []string{"all", "one-at-a-time"}}},
	rpc.CmdSetFollowUpMode:   {{name: "mode", kind: kString, required: true, enum: []string{"all", "one-at-a-time"}}},
	rpc.CmdSetQueueMode:      {{name: "mode", kind: kString, required: true, enum: []string{"all", "one-at-a-time"}}},
	rpc.CmdSetInterruptMode:  {{name: "mode", kind: kString, required: true, enum: []string{"immediate", "wait"}}},
	rpc.CmdSetAutoCompaction: {{name: "enabled", kind: kBool, required: true}},
	rpc.CmdSetAutoRetry:      {{name: "enabled", kind: kBool, required: true}},
	rpc.CmdBash:              {{name: "command", kind: kString, required: true}, {name: "excludeFromContext", kind: kBool}},
	rpc.CmdSwitchSession:     {{name: "sessionPath", kind: kString, required: true}},
	rpc.CmdFork:              {{name: "entryId", kind: kString, required: true}},
	rpc.CmdBranch:            {{name: "entryId", kind: kString, required: true}},
	rpc.CmdGetEntries:        {{name: "since", kind: kString}},
	rpc.CmdSetSessionName:    {{name: "name", kind: kString, required: true}},
	rpc.CmdCompact:           {{name: "customInstructions", kind: kString}},
	rpc.CmdNavigateTree: {
		{name: "targetId", kind: kString, required: true},
		{name: "summarize", kind: kBool},
		{name: "customInstructions", kind: kString},
		{name: "replaceInstructions", kind: kBool},
		{name: "label", kind: kString},
	},
	rpc.CmdSetLabel:       {{name: "entryId", kind: kString, required: true}, {name: "label", kind: kString}},
	rpc.CmdSetEntryLabel:  {{name: "targetId", kind: kString, required: true}, {name: "label", kind: kString}},
	rpc.CmdSetActiveTools: {{name: "toolNames", kind: kArray, required: true}},
	rpc.CmdSetTodos:       {{name: "phases", kind: kArray, required: true}},
	rpc.CmdSetHostTools:   {{name: "tools", kind: kArray, required: true}},
	rpc.CmdGetTree:        {{name: "flat", kind: kBool}},
	rpc.CmdGetSessionTree: {{name: "view", kind: kString}, {name: "flat", kind: kBool}},
	rpc.CmdListSessions: {
		{name: "scope", kind: kString, enum: []string{"cwd", "current", "all"}},
		{name: "sessionDir", kind: kString}, {name: "query", kind: kString},
		{name: "limit", kind: kNumber}, {name: "offset", kind: kNumber}, {name: "includeText", kind: kBool},
	},
	rpc.CmdRenameSession: {{name: "sessionPath", kind: kString, required: true}, {name: "name", kind: kString, required: true}},
	rpc.CmdDeleteSession: {{name: "sessionPath", kind: kString, required: true}},
	rpc.CmdExportHTML:    {{name: "outputPath", kind: kString}, {name: "inline", kind: kBool}},

	rpc.CmdNegotiateProtocol:       {{name: "protocolVersion", kind: kNumber, required: true}},
	rpc.CmdOpenSession:             {{name: "sessionDir", kind: kString, required: true}},
	rpc.CmdLogin:                   {{name: "providerId", kind: kString, required: true}, {name: "noBrowser", kind: kBool}},
	rpc.CmdLogout:                  {{name: "providerId", kind: kString, required: true}},
	rpc.CmdHandoff:                 {{name: "customInstructions", kind: kString}},
	rpc.CmdSetFastMode:             {{name: "enabled", kind: kBool, required: true}},
	rpc.CmdSetSubagentSubscription: {{name: "level", kind: kString, required: true}},
	rpc.CmdGetSubagentMessages:     {{name: "subagentId", kind: kString}, {name: "sessionFile", kind: kString}, {name: "fromByte", kind: kNumber}},
	rpc.CmdGetMessagesPage:         {{name: "cursor", kind: kString}, {name: "limit", kind: kNumber}},
}

// checkFields validates obj against the command's field list.
func checkFields(cmd string, obj map[string]any) error {
	for _, f := range commandFields[cmd] {
		v, ok := obj[f.name]
		if !ok || v == nil {
			if f.required {
				return fmt.Errorf("Missing field %q: expected %s", f.name, describe(f))
			}
			continue
		}
		if k := jsonKind(v); k != f.kind {
			return fmt.Errorf("Invalid field %q: expected %s, got %s", f.name, describe(f), k)
		}
		if len(f.enum) > 0 {
			s, _ := v.(string)
			okv := false
			for _, e := range f.enum {
				if e == s {
					okv = true
				}
			}
			if !okv {
				return fmt.Errorf("Invalid field %q: expected %s, got %s", f.name, describe(f), quoted(v))
			}
		}
		if f.name == "images" {
			for i, im := range v.([]any) {
				if err := checkImage(i, im); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func describe(f fieldSpec) string {
	if len(f.enum) == 0 {
		if f.kind == kArray || f.kind == kObject {
			return "an " + f.kind
		}
		return "a " + f.kind
	}
	s := "one of "
	for i, e := range f.enum {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", e)
	}
	return s
}

func checkImage(i int, v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("Invalid field \"images[%d]\": expected an object, got %s", i, jsonKind(v))
	}
	if t, _ := obj["type"].(string); t != "image" {
		return fmt.Errorf("Invalid field \"images[%d].type\": expected \"image\"", i)
	}
	if src, ok := obj["source"]; ok {
		so, ok := src.(map[string]any)
		if !ok {
			return fmt.Errorf("Invalid field \"images[%d].source\": expected an object, got %s", i, jsonKind(src))
		}
		switch so["type"] {
		case "base64":
			if !isString(so["data"]) {
				return fmt.Errorf("Missing field \"images[%d].source.data\": expected a string", i)
			}
			if !isString(so["mediaType"]) {
				return fmt.Errorf("Missing field \"images[%d].source.mediaType\": expected a string", i)
			}
		case "url":
			return checkImageURL(fmt.Sprintf("images[%d].source.url", i), so["url"])
		default:
			return fmt.Errorf("Invalid field \"images[%d].source.type\": expected \"base64\" or \"url\"", i)
		}
		return nil
	}
	if u, ok := obj["url"]; ok {
		if _, ok := obj["data"]; ok {
			return fmt.Errorf("Invalid field \"images[%d]\": give data or url, not both", i)
		}
		return checkImageURL(fmt.Sprintf("images[%d].url", i), u)
	}
	if !isString(obj["data"]) {
		return fmt.Errorf("Missing field \"images[%d].data\": expected a string", i)
	}
	if !isString(obj["mimeType"]) {
		return fmt.Errorf("Missing field \"images[%d].mimeType\": expected a string", i)
	}
	return nil
}

// checkImageURL checks an image URL: a string that internal/fetch would
// fetch (http or https).
func checkImageURL(name string, v any) error {
	if n, ok := v.(longString); ok {
		return fmt.Errorf("Invalid field %q: a URL of %d bytes is too long", name, int(n))
	}
	s, ok := v.(string)
	if !ok {
		if v == nil {
			return fmt.Errorf("Missing field %q: expected a string", name)
		}
		return fmt.Errorf("Invalid field %q: expected a string, got %s", name, jsonKind(v))
	}
	if err := fetch.CheckURL(s); err != nil {
		return fmt.Errorf("Invalid field %q: %v", name, err)
	}
	return nil
}
