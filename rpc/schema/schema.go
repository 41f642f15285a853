// Package schema generates the JSON Schema (draft 2020-12) of the protocol
// Pisces speaks in RPC mode from the types of package rpc, by reflection.
// The result is checked in at docs/rpc.schema.json and printed by
// `pisces --print-schema`.
//
// Layout: the root accepts any line of the protocol (a command, a response
// or an event). $defs holds
//
//   - Command, Response and Event: one of the lines of each kind,
//     discriminated by "type" (and, for responses, by "command" and
//     "success");
//   - one entry per command (PromptCommand, GetStateCommand, ...), named after
//     the command in CamelCase;
//   - one entry per event (AgentStartEvent, ...), named the same way;
//   - one entry per data type and shared type, named after its Go type
//     (SessionState, Model, UserMessage, ...).
//
// Names come from the json tags; a field with omitempty is not required; a
// pointer without omitempty may be null. Messages are discriminated by their
// "role", content blocks and assistant message events by their "type".
// Unknown members are allowed everywhere (as pi's clients tolerate them).
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/lazy"
	"github.com/pisces-agent/pisces/internal/task"
	"github.com/pisces-agent/pisces/rpc"
)

// Draft is the JSON Schema dialect of the document.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// Generate returns the schema document, indented with two spaces and ending
// in a newline. The output is deterministic.
func Generate() ([]byte, error) {
	g := newGenerator()
	doc := g.document()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if g.err != nil {
		return nil, g.err
	}
	return buf.Bytes(), nil
}

// obj is a JSON object that keeps its keys in insertion order.
type obj struct {
	keys []string
	vals map[string]any
}

func newObj(kv ...any) *obj {
	o := &obj{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *obj) set(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *obj) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(o.vals[k]); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func ref(name string) *obj { return newObj("$ref", "#/$defs/"+name) }

func constOf(v any) *obj { return newObj("const", v) }

func strEnum(vs ...string) *obj { return newObj("type", "string", "enum", vs) }

// nullable lets s also be null.
func nullable(s *obj) *obj {
	if t, ok := s.vals["type"].(string); ok && len(s.keys) == 1 {
		return newObj("type", []string{t, "null"})
	}
	return newObj("anyOf", []any{s, newObj("type", "null")})
}

// camel turns a snake_case wire name into CamelCase.
func camel(name string) string {
	var b strings.Builder
	for _, p := range strings.Split(name, "_") {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// thinkingLevels are the levels pi knows.
var thinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh", "max"}

// enums restricts string members, keyed by definition name and member. The
// tables below are built on first use: only --print-schema and the tests
// generate a schema, so a session does not build them at start-up.
var enums = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"PromptCommand.streamingBehavior": {"steer", "followUp"},
		"SetThinkingLevelCommand.level":   thinkingLevels,
		"SetSteeringModeCommand.mode":     {"all", "one-at-a-time"},
		"SetFollowUpModeCommand.mode":     {"all", "one-at-a-time"},
		"SetQueueModeCommand.mode":        {"all", "one-at-a-time"},
		"SetInterruptModeCommand.mode":    {"immediate", "wait"},
		"PromptData.disposition":          {"started", "queued", "handled"},
		"SessionState.steeringMode":       {"all", "one-at-a-time"},
		"SessionState.followUpMode":       {"all", "one-at-a-time"},
		"SessionState.queueMode":          {"all", "one-at-a-time"},
		"SessionState.interruptMode":      {"immediate", "wait"},
		"SessionChangedEvent.reason":      {"new", "switch", "fork", "tree", "reload"},
		"AssistantMessage.stopReason":     {"pending", "stop", "length", "toolUse", "error", "aborted"},
		"ImageInput.type":                 {"image"},
		"ImageSource.type":                {"base64", "url"},
		"ThinkingLevelChangedEvent.level": thinkingLevels,
		"CycleModelData.thinkingLevel":    thinkingLevels,
		"SessionState.thinkingLevel":      thinkingLevels,
		"LevelData.level":                 thinkingLevels,

		"SummarizationRetryAttemptStartEvent.source": {"compaction", "branchSummary"},
		"SummarizationRetryAttemptStartEvent.reason": {"manual", "threshold", "overflow"},
	}
}}

// descriptions of shared and data types, keyed by definition name.
var descriptions = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"Command":                  "A line on stdin: one command, discriminated by type. id, when present, is echoed by the response.",
		"Response":                 "The answer to a command, discriminated by command and success. id echoes the request's id.",
		"ErrorResponse":            "A failed command (unknown command, invalid field, handler failure). command is \"parse\" when the line could not be read as a command.",
		"Event":                    "A line on stdout that is not a response, discriminated by type.",
		"Message":                  "A message of the session, discriminated by role.",
		"Content":                  "A content block, discriminated by type.",
		"UserContent":              "A plain string or a list of content blocks.",
		"AssistantMessageEvent":    "One step of a streamed assistant message (pi's AssistantMessageEvent). partial is sent on the legacy wire only.",
		"TextContent":              "A text block.",
		"ThinkingContent":          "A thinking block.",
		"ImageContent":             "An image block: base64 data and mimeType, or an http(s) url (fetched, or passed to the provider, when a request is built).",
		"ToolCallContent":          "A tool call; arguments is a JSON object.",
		"Model":                    "A model as pi describes it.",
		"Usage":                    "Token counts and cost of a model response.",
		"Cost":                     "Cost in dollars.",
		"ImageInput":               "An image attached to a prompt: pi's {type, data, mimeType}, {type, url}, or {type, source} (the form of pi's older RPC documentation and oh-my-pi's). URLs are http or https.",
		"ImageSource":              "The source of an image in the {type, source} form: base64 data with its mediaType, or a url.",
		"SystemMessage":            "The system prompt and tool loadout checkpoint (pi 1.5).",
		"UserMessage":              "A prompt.",
		"AssistantMessage":         "One model response.",
		"ToolResultMessage":        "The result of one tool call.",
		"BashExecutionMessage":     "A shell command run by the user (the bash command).",
		"CustomMessage":            "An extension's message that takes part in the context.",
		"BranchSummaryMessage":     "The summary of an abandoned branch.",
		"CompactionSummaryMessage": "The summary of compacted history.",
		"PromptData":               "What happened to the message: started a run, queued, or handled (an extension command).",
		"SessionState":             "get_state's data.",
		"TreeNode":                 "One node of get_tree: a raw session entry and its children.",
	}
}}

type generator struct {
	defs   *obj
	byName map[string]reflect.Type
	err    error
}

func newGenerator() *generator {
	return &generator{defs: newObj(), byName: map[string]reflect.Type{}}
}

// eventIface is the interface every event type implements.
func eventIface() reflect.Type { return reflect.TypeFor[rpc.Event]() }

func (g *generator) fail(format string, args ...any) {
	if g.err == nil {
		g.err = fmt.Errorf("schema: "+format, args...)
	}
}

// define reserves a definition name; build fills it in (once).
func (g *generator) define(name string, build func() *obj) *obj {
	if !g.defs.has(name) {
		g.defs.set(name, nil) // reserve: keeps the order and stops recursion
		s := build()
		if d, ok := descriptions.Get()[name]; ok && !s.has("description") {
			s = prepend(s, "description", d)
		}
		g.defs.set(name, s)
	}
	return ref(name)
}

// prepend returns s with k:v as its first member.
func prepend(s *obj, k string, v any) *obj {
	o := newObj(k, v)
	for _, key := range s.keys {
		o.set(key, s.vals[key])
	}
	return o
}

func (g *generator) document() *obj {
	// The three kinds of lines come first.
	g.defs.set("Command", nil)
	g.defs.set("Response", nil)
	g.defs.set("ErrorResponse", nil)
	g.defs.set("Event", nil)

	var commands, responses []any
	for _, c := range rpc.Commands() {
		name := camel(c.Name) + "Command"
		commands = append(commands, g.define(name, func() *obj { return g.commandDef(name, c) }))
		if c.Unavailable {
			continue
		}
		responses = append(responses, g.responseVariant(c))
	}
	var events []any
	for _, e := range AllEvents() {
		name := camel(e.Name) + "Event"
		events = append(events, g.define(name, func() *obj { return g.eventDef(name, e) }))
	}
	responses = append(responses, ref("ErrorResponse"))

	g.defs.set("Command", newObj("description", descriptions.Get()["Command"], "oneOf", commands))
	g.defs.set("Response", newObj("description", descriptions.Get()["Response"], "oneOf", responses))
	g.defs.set("ErrorResponse", newObj(
		"description", descriptions.Get()["ErrorResponse"],
		"type", "object",
		"properties", newObj(
			"id", newObj("type", "string"),
			"type", constOf("response"),
			"command", newObj("type", "string"),
			"success", constOf(false),
			"error", newObj("type", "string"),
		),
		"required", []string{"type", "command", "success", "error"},
	))
	g.defs.set("Event", newObj("description", descriptions.Get()["Event"], "oneOf", events))

	return newObj(
		"$schema", Draft,
		"title", "Pisces RPC protocol",
		"description", "The JSONL protocol of `pisces --mode rpc`: commands on stdin, responses and events on stdout, one JSON object per line. Generated from package rpc; do not edit by hand (regenerate with `go test ./rpc/schema -update`).",
		"anyOf", []any{ref("Command"), ref("Response"), ref("Event")},
		"$defs", g.defs,
	)
}

func (g *generator) commandDef(name string, c rpc.CommandInfo) *obj {
	s := g.structSchema(name, reflect.TypeOf(c.Command), map[string]any{"type": c.Name})
	doc := c.Doc
	switch {
	case c.Unavailable:
		doc = "Not available in this version of Pisces: answered with success:false."
	case c.AliasOf != "":
		doc = fmt.Sprintf("Older name of %s (answered with the command name as sent).", c.AliasOf)
	}
	return prepend(s, "description", doc)
}

func (g *generator) responseVariant(c rpc.CommandInfo) *obj {
	props := newObj(
		"id", newObj("type", "string"),
		"type", constOf("response"),
		"command", constOf(c.Name),
		"success", constOf(true),
	)
	required := []string{"type", "command", "success"}
	if c.Data != nil {
		d := g.schemaOf(reflect.TypeOf(c.Data))
		if c.DataNullable {
			d = nullable(d)
		}
		props.set("data", d)
		if !c.DataOptional {
			required = append(required, "data")
		}
	}
	return newObj(
		"title", c.Name+" response",
		"type", "object",
		"properties", props,
		"required", required,
	)
}

func (g *generator) eventDef(name string, e rpc.EventInfo) *obj {
	t := reflect.TypeOf(e.Event)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var s *obj
	if t == reflect.TypeFor[rpc.MessageUpdateEvent]() {
		s = g.messageUpdateDef(e.Name)
	} else {
		s = g.structSchema(name, t, map[string]any{"type": e.Name})
	}
	doc := e.Doc
	if e.Legacy {
		doc += " Sent only with --rpc-compat legacy."
	}
	if e.OMP {
		doc += " Sent only on oh-my-pi's wire (after negotiate_protocol, or with --rpc-compat omp)."
	}
	return prepend(s, "description", doc)
}

// messageUpdateDef describes message_update, whose MarshalJSON picks one of
// two wire forms.
func (g *generator) messageUpdateDef(name string) *obj {
	ame := g.assistantEventRef()
	return newObj("anyOf", []any{
		newObj(
			"title", "pi 1.5 form",
			"type", "object",
			"properties", newObj(
				"type", constOf(name),
				"usage", g.schemaOf(reflect.TypeFor[ai.Usage]()),
				"assistantMessageEvent", ame,
			),
			"required", []string{"type", "usage", "assistantMessageEvent"},
		),
		newObj(
			"title", "legacy form (--rpc-compat legacy): message is the point-in-time snapshot",
			"type", "object",
			"properties", newObj(
				"type", constOf(name),
				"message", nullable(g.schemaOf(reflect.TypeFor[ai.AssistantMessage]())),
				"assistantMessageEvent", ame,
			),
			"required", []string{"type", "message", "assistantMessageEvent"},
		),
	})
}

// schemaOf returns the schema of a Go type: a $ref for named structs and
// the special types, inline otherwise.
func (g *generator) schemaOf(t reflect.Type) *obj {
	switch t {
	case reflect.TypeFor[json.RawMessage]():
		return newObj()
	case reflect.TypeFor[ai.Content]():
		return g.contentRef()
	case reflect.TypeFor[ai.UserContent]():
		return g.define("UserContent", func() *obj {
			return newObj("oneOf", []any{
				newObj("type", "string"),
				newObj("type", "array", "items", g.contentRef()),
			})
		})
	case reflect.TypeFor[ai.Message]():
		return g.messageRef()
	case reflect.TypeFor[ai.Messages]():
		return newObj("type", "array", "items", g.messageRef())
	case reflect.TypeFor[ai.AssistantEvent]():
		return g.assistantEventRef()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.schemaOf(t.Elem())
	case reflect.Struct:
		if t.Name() == "" {
			return g.structSchema("", t, nil)
		}
		name := t.Name()
		if prev, ok := g.byName[name]; ok && prev != t {
			g.fail("two types named %s (%s and %s)", name, prev, t)
		}
		g.byName[name] = t
		var consts map[string]any
		if m, ok := reflect.New(t).Interface().(ai.Message); ok {
			consts = map[string]any{"role": m.MessageRole()}
		}
		return g.define(name, func() *obj { return g.structSchema(name, t, consts) })
	case reflect.Slice, reflect.Array:
		return newObj("type", "array", "items", g.schemaOf(t.Elem()))
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			g.fail("map with non-string keys: %s", t)
		}
		return newObj("type", "object", "additionalProperties", g.schemaOf(t.Elem()))
	case reflect.String:
		return newObj("type", "string")
	case reflect.Bool:
		return newObj("type", "boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return newObj("type", "integer")
	case reflect.Float32, reflect.Float64:
		return newObj("type", "number")
	case reflect.Interface:
		return newObj()
	}
	g.fail("unsupported type %s", t)
	return newObj()
}

// structSchema describes a struct from its json tags. consts pins members
// to a value (the "type" of a command or event, the "role" of a message).
func (g *generator) structSchema(defName string, t reflect.Type, consts map[string]any) *obj {
	if t.Implements(eventIface()) || reflect.PointerTo(t).Implements(eventIface()) {
		if _, ok := consts["type"]; !ok && defName != "" {
			g.fail("event struct %s used as a plain type", t)
		}
	}
	props := newObj()
	var required []string
	g.fields(defName, t, consts, props, &required, false)
	s := newObj("type", "object", "properties", props)
	if len(required) > 0 {
		s.set("required", required)
	}
	return s
}

// fields describes t's members; optional: none of them is required (the
// members of an embedded pointer, sent only when it is set).
func (g *generator) fields(defName string, t reflect.Type, consts map[string]any, props *obj, required *[]string, optional bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			ptr := ft.Kind() == reflect.Pointer
			if ptr {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.fields(defName, ft, consts, props, required, optional || ptr)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omitempty := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		var s *obj
		if v, ok := consts[name]; ok {
			s = newObj("const", v)
		} else if vs, ok := enums.Get()[defName+"."+name]; ok && vs != nil {
			s = strEnum(vs...)
		} else {
			s = g.schemaOf(f.Type)
			if f.Type.Kind() == reflect.Pointer && !omitempty {
				s = nullable(s)
			}
		}
		props.set(name, s)
		if !omitempty && !optional {
			*required = append(*required, name)
		}
	}
}

func (g *generator) messageRef() *obj {
	return g.define("Message", func() *obj {
		var variants []any
		for _, m := range []ai.Message{
			&ai.SystemMessage{}, &ai.UserMessage{}, &ai.AssistantMessage{}, &ai.ToolResultMessage{},
			&ai.BashExecutionMessage{}, &ai.CustomMessage{}, &ai.BranchSummaryMessage{}, &ai.CompactionSummaryMessage{},
		} {
			variants = append(variants, g.schemaOf(reflect.TypeOf(m)))
		}
		return newObj("oneOf", variants)
	})
}

// contentRef describes ai.Content, whose MarshalJSON writes only the
// members of its type (see internal/ai/content.go).
func (g *generator) contentRef() *obj {
	return g.define("Content", func() *obj {
		str := func() *obj { return newObj("type", "string") }
		block := func(name string, props *obj, required ...string) *obj {
			return g.define(name, func() *obj {
				return newObj("type", "object", "properties", props, "required", required)
			})
		}
		return newObj("oneOf", []any{
			block("TextContent", newObj(
				"type", constOf(ai.ContentText),
				"text", str(),
				"textSignature", str(),
			), "type", "text"),
			block("ThinkingContent", newObj(
				"type", constOf(ai.ContentThinking),
				"thinking", str(),
				"thinkingSignature", str(),
				"redacted", newObj("type", "boolean"),
			), "type", "thinking"),
			// base64 data and its MIME type, or a URL (the MIME type then
			// optional)
			g.define("ImageContent", func() *obj {
				return newObj("type", "object", "properties", newObj(
					"type", constOf(ai.ContentImage),
					"data", str(),
					"mimeType", str(),
					"url", str(),
				), "required", []string{"type"}, "anyOf", []any{
					newObj("required", []string{"data", "mimeType"}),
					newObj("required", []string{"url"}),
				})
			}),
			block("ToolCallContent", newObj(
				"type", constOf(ai.ContentToolCall),
				"id", str(),
				"name", str(),
				"arguments", newObj("type", "object"),
				"thoughtSignature", str(),
				"argumentsError", str(),
				"namespace", str(),
			), "type", "id", "name", "arguments"),
		})
	})
}

// assistantEventRef describes ai.AssistantEvent as WireJSON writes it in a
// message_update. A provider's start, done and error events are not sent
// as updates (they become message_start and message_end, as in pi 1.5), so
// they are not listed.
func (g *generator) assistantEventRef() *obj {
	return g.define("AssistantMessageEvent", func() *obj {
		msg := g.schemaOf(reflect.TypeFor[ai.AssistantMessage]())
		idx := newObj("type", "integer")
		str := func() *obj { return newObj("type", "string") }
		variant := func(types []string, props *obj, required ...string) *obj {
			var typ *obj
			if len(types) == 1 {
				typ = constOf(types[0])
			} else {
				typ = strEnum(types...)
			}
			p := prepend(props, "type", typ)
			p.set("partial", msg) // the legacy wire's snapshot
			return newObj("type", "object", "properties", p, "required", append([]string{"type"}, required...))
		}
		return newObj("oneOf", []any{
			variant([]string{ai.EvTextStart, ai.EvThinkingStart}, newObj("contentIndex", idx), "contentIndex"),
			variant([]string{ai.EvToolCallStart}, newObj("contentIndex", idx, "id", str(), "toolName", str()), "contentIndex", "id", "toolName"),
			variant([]string{ai.EvTextDelta, ai.EvThinkingDelta, ai.EvToolCallDelta}, newObj("contentIndex", idx, "delta", str()), "contentIndex", "delta"),
			variant([]string{ai.EvTextEnd, ai.EvThinkingEnd}, newObj("contentIndex", idx, "content", str()), "contentIndex", "content"),
			variant([]string{ai.EvToolCallEnd}, newObj("contentIndex", idx, "toolCall", g.contentRef()), "contentIndex", "toolCall"),
		})
	})
}

// AllEvents is every event of the protocol: the rpc package's and the task
// tool's (subagent lifecycle, budgets, todo reminders).
func AllEvents() []rpc.EventInfo {
	return append(rpc.Events(), task.EventInfos()...)
}
