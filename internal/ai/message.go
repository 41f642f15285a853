package ai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Message roles.
const (
	RoleSystem            = "system"
	RoleUser              = "user"
	RoleAssistant         = "assistant"
	RoleToolResult        = "toolResult"
	RoleBashExecution     = "bashExecution"
	RoleCustom            = "custom"
	RoleBranchSummary     = "branchSummary"
	RoleCompactionSummary = "compactionSummary"
)

// Stop reasons of an assistant message.
const (
	StopPending = "pending"
	StopStop    = "stop"
	StopLength  = "length"
	StopToolUse = "toolUse"
	StopError   = "error"
	StopAborted = "aborted"
)

// Message is one of pi's AgentMessage shapes. The concrete types are the
// pointer types below; Unknown keeps a role this build does not know.
type Message interface {
	MessageRole() string
	MessageTimestamp() int64
}

// Cost is the price of a usage in dollars.
type Cost struct {
	Input      float64     `json:"input"`
	Output     float64     `json:"output"`
	CacheRead  float64     `json:"cacheRead"`
	CacheWrite float64     `json:"cacheWrite"`
	Total      float64     `json:"total"`
	Extra      jsonx.Extra `json:"-"`
}

// Usage counts the tokens of one model response.
type Usage struct {
	Input       int64       `json:"input"`
	Output      int64       `json:"output"`
	CacheRead   int64       `json:"cacheRead"`
	CacheWrite  int64       `json:"cacheWrite"`
	TotalTokens int64       `json:"totalTokens"`
	Cost        Cost        `json:"cost"`
	Extra       jsonx.Extra `json:"-"`
}

// Add accumulates o into u (tokens and cost).
func (u *Usage) Add(o Usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.TotalTokens += o.TotalTokens
	u.Cost.Input += o.Cost.Input
	u.Cost.Output += o.Cost.Output
	u.Cost.CacheRead += o.Cost.CacheRead
	u.Cost.CacheWrite += o.Cost.CacheWrite
	u.Cost.Total += o.Cost.Total
}

type costAlias Cost

func (c Cost) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := c.AppendJSON(make([]byte, 0, 96)); err == nil {
			return b, nil
		}
	}
	return jsonx.MarshalObject(costAlias(c), c.Extra)
}
func (c *Cost) UnmarshalJSON(b []byte) error {
	var a costAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*c = Cost(a)
	c.Extra = ex
	return err
}

type usageAlias Usage

func (u Usage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := u.AppendJSON(make([]byte, 0, 192)); err == nil {
			return b, nil
		}
	}
	return jsonx.MarshalObject(usageAlias(u), u.Extra)
}
func (u *Usage) UnmarshalJSON(b []byte) error {
	var a usageAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*u = Usage(a)
	u.Extra = ex
	return err
}

// ToolSpec is a tool as declared to a model.
type ToolSpec struct {
	Name                string          `json:"name"`
	Description         string          `json:"description"`
	Parameters          json.RawMessage `json:"parameters"`
	ConstrainedSampling *bool           `json:"constrainedSampling,omitempty"`
}

// ToolName names a removed tool in a system message.
type ToolName struct {
	Name string `json:"name"`
}

// SystemMessage is pi 1.5's system prompt and tool loadout checkpoint (or a
// patch of it).
type SystemMessage struct {
	Role         string          `json:"role"`
	Content      UserContent     `json:"content"`
	Sections     json.RawMessage `json:"sections,omitempty"` // Record<string, string|null>, order kept
	Timestamp    int64           `json:"timestamp"`
	ToolsAdded   []ToolSpec      `json:"toolsAdded,omitempty"`
	ToolsRemoved []ToolName      `json:"toolsRemoved,omitempty"`
	Extra        jsonx.Extra     `json:"-"`
}

// PromptText is the prompt the message carries: its content when that is
// not empty, else its sections' texts in order, separated by blank lines
// (pi writes the prompt in sections only). A patch gives only the sections
// it changes.
func (m *SystemMessage) PromptText() string {
	if t := m.Content.PlainText(); t != "" {
		return t
	}
	dec := json.NewDecoder(bytes.NewReader(m.Sections))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var parts []string
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			break
		}
		var text *string
		if err := dec.Decode(&text); err != nil {
			break
		}
		if text != nil && *text != "" {
			parts = append(parts, *text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// UserMessage is a prompt.
type UserMessage struct {
	Role      string      `json:"role"`
	Content   UserContent `json:"content"`
	Timestamp int64       `json:"timestamp"`
	Extra     jsonx.Extra `json:"-"`
}

// AssistantMessage is one model response.
type AssistantMessage struct {
	Role                  string      `json:"role"`
	Content               []Content   `json:"content"`
	API                   string      `json:"api"`
	Provider              string      `json:"provider"`
	Model                 string      `json:"model"`
	Usage                 Usage       `json:"usage"`
	StopReason            string      `json:"stopReason"`
	ErrorMessage          string      `json:"errorMessage,omitempty"`
	Timestamp             int64       `json:"timestamp"`
	ResponseID            string      `json:"responseId,omitempty"`
	RawStopReason         string      `json:"rawStopReason,omitempty"`
	DurationMs            *int64      `json:"durationMs,omitempty"`
	ThinkingLevel         string      `json:"thinkingLevel,omitempty"`
	ProviderThinkingLevel string      `json:"providerThinkingLevel,omitempty"`
	EndTurn               *bool       `json:"endTurn,omitempty"`
	Extra                 jsonx.Extra `json:"-"`

	// Not part of the message's JSON: what the provider said about a
	// failure, for the retry layer.
	ErrorStatus int           `json:"-"` // HTTP status of a failed request (0 when none)
	RetryAfter  time.Duration `json:"-"` // the provider's Retry-After, when it gave one
}

// ToolCalls returns the toolCall blocks of the message.
func (m *AssistantMessage) ToolCalls() []Content {
	var out []Content
	for _, c := range m.Content {
		if c.Type == ContentToolCall {
			out = append(out, c)
		}
	}
	return out
}

// Clone returns a deep enough copy for a point-in-time snapshot.
func (m *AssistantMessage) Clone() *AssistantMessage {
	c := *m
	c.Content = append([]Content(nil), m.Content...)
	return &c
}

// ToolResultMessage carries the result of one tool call back to the model.
type ToolResultMessage struct {
	Role        string          `json:"role"`
	ToolCallID  string          `json:"toolCallId"`
	ToolName    string          `json:"toolName"`
	Content     []Content       `json:"content"`
	Details     json.RawMessage `json:"details,omitempty"`
	Usage       *Usage          `json:"usage,omitempty"`
	IsError     bool            `json:"isError"`
	DurationMs  *int64          `json:"durationMs,omitempty"`
	NestedCalls json.RawMessage `json:"nestedCalls,omitempty"`
	Timestamp   int64           `json:"timestamp"`
	Extra       jsonx.Extra     `json:"-"`
}

// BashExecutionMessage records a user-run shell command (the RPC bash command).
type BashExecutionMessage struct {
	Role               string      `json:"role"`
	Command            string      `json:"command"`
	Output             string      `json:"output"`
	ExitCode           *int        `json:"exitCode,omitempty"`
	Cancelled          bool        `json:"cancelled"`
	Truncated          bool        `json:"truncated"`
	FullOutputPath     string      `json:"fullOutputPath,omitempty"`
	Timestamp          int64       `json:"timestamp"`
	ExcludeFromContext bool        `json:"excludeFromContext,omitempty"`
	Extra              jsonx.Extra `json:"-"`
}

// CustomMessage is an extension's message that takes part in the context.
type CustomMessage struct {
	Role       string          `json:"role"`
	CustomType string          `json:"customType"`
	Content    UserContent     `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
	Timestamp  int64           `json:"timestamp"`
	Extra      jsonx.Extra     `json:"-"`
}

// BranchSummaryMessage is the context form of a branch_summary entry.
type BranchSummaryMessage struct {
	Role      string      `json:"role"`
	Summary   string      `json:"summary"`
	FromID    *string     `json:"fromId"`
	Timestamp int64       `json:"timestamp"`
	Extra     jsonx.Extra `json:"-"`
}

// CompactionSummaryMessage is the context form of a compaction entry.
type CompactionSummaryMessage struct {
	Role         string      `json:"role"`
	Summary      string      `json:"summary"`
	TokensBefore int64       `json:"tokensBefore"`
	Timestamp    int64       `json:"timestamp"`
	Extra        jsonx.Extra `json:"-"`
}

// UnknownMessage keeps a message of a role this build does not know.
type UnknownMessage struct {
	Role string
	Raw  json.RawMessage
}

func (m *SystemMessage) MessageRole() string            { return RoleSystem }
func (m *UserMessage) MessageRole() string              { return RoleUser }
func (m *AssistantMessage) MessageRole() string         { return RoleAssistant }
func (m *ToolResultMessage) MessageRole() string        { return RoleToolResult }
func (m *BashExecutionMessage) MessageRole() string     { return RoleBashExecution }
func (m *CustomMessage) MessageRole() string            { return RoleCustom }
func (m *BranchSummaryMessage) MessageRole() string     { return RoleBranchSummary }
func (m *CompactionSummaryMessage) MessageRole() string { return RoleCompactionSummary }
func (m *UnknownMessage) MessageRole() string           { return m.Role }

func (m *SystemMessage) MessageTimestamp() int64            { return m.Timestamp }
func (m *UserMessage) MessageTimestamp() int64              { return m.Timestamp }
func (m *AssistantMessage) MessageTimestamp() int64         { return m.Timestamp }
func (m *ToolResultMessage) MessageTimestamp() int64        { return m.Timestamp }
func (m *BashExecutionMessage) MessageTimestamp() int64     { return m.Timestamp }
func (m *CustomMessage) MessageTimestamp() int64            { return m.Timestamp }
func (m *BranchSummaryMessage) MessageTimestamp() int64     { return m.Timestamp }
func (m *CompactionSummaryMessage) MessageTimestamp() int64 { return m.Timestamp }
func (m *UnknownMessage) MessageTimestamp() int64 {
	var v struct {
		Timestamp int64 `json:"timestamp"`
	}
	_ = json.Unmarshal(m.Raw, &v)
	return v.Timestamp
}

type (
	systemAlias            SystemMessage
	userAlias              UserMessage
	assistantAlias         AssistantMessage
	toolResultAlias        ToolResultMessage
	bashExecutionAlias     BashExecutionMessage
	customAlias            CustomMessage
	branchSummaryAlias     BranchSummaryMessage
	compactionSummaryAlias CompactionSummaryMessage
)

func (m SystemMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, 256)); err == nil {
			return b, nil
		}
	}
	m.Role = RoleSystem
	return jsonx.MarshalObject(systemAlias(m), m.Extra)
}

func (m UserMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, SizeHint(&m))); err == nil {
			return b, nil
		}
	}
	m.Role = RoleUser
	return jsonx.MarshalObject(userAlias(m), m.Extra)
}

func (m AssistantMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, 512)); err == nil {
			return b, nil
		}
	}
	m.Role = RoleAssistant
	if m.Content == nil {
		m.Content = []Content{}
	}
	return jsonx.MarshalObject(assistantAlias(m), m.Extra)
}

func (m ToolResultMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, SizeHint(&m))); err == nil {
			return b, nil
		}
	}
	m.Role = RoleToolResult
	if m.Content == nil {
		m.Content = []Content{}
	}
	return jsonx.MarshalObject(toolResultAlias(m), m.Extra)
}

func (m BashExecutionMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, 256)); err == nil {
			return b, nil
		}
	}
	m.Role = RoleBashExecution
	return jsonx.MarshalObject(bashExecutionAlias(m), m.Extra)
}

func (m CustomMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, 256)); err == nil {
			return b, nil
		}
	}
	m.Role = RoleCustom
	return jsonx.MarshalObject(customAlias(m), m.Extra)
}

func (m BranchSummaryMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, 256)); err == nil {
			return b, nil
		}
	}
	m.Role = RoleBranchSummary
	return jsonx.MarshalObject(branchSummaryAlias(m), m.Extra)
}

func (m CompactionSummaryMessage) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := m.AppendJSON(make([]byte, 0, 256)); err == nil {
			return b, nil
		}
	}
	m.Role = RoleCompactionSummary
	return jsonx.MarshalObject(compactionSummaryAlias(m), m.Extra)
}

func (m UnknownMessage) MarshalJSON() ([]byte, error) { return m.Raw, nil }

func (m *SystemMessage) UnmarshalJSON(b []byte) error {
	var a systemAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = SystemMessage(a)
	m.Extra = ex
	return err
}

func (m *UserMessage) UnmarshalJSON(b []byte) error {
	var a userAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = UserMessage(a)
	m.Extra = ex
	return err
}

func (m *AssistantMessage) UnmarshalJSON(b []byte) error {
	var a assistantAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = AssistantMessage(a)
	m.Extra = ex
	return err
}

func (m *ToolResultMessage) UnmarshalJSON(b []byte) error {
	var a toolResultAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = ToolResultMessage(a)
	m.Extra = ex
	return err
}

func (m *BashExecutionMessage) UnmarshalJSON(b []byte) error {
	var a bashExecutionAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = BashExecutionMessage(a)
	m.Extra = ex
	return err
}

func (m *CustomMessage) UnmarshalJSON(b []byte) error {
	var a customAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = CustomMessage(a)
	m.Extra = ex
	return err
}

func (m *BranchSummaryMessage) UnmarshalJSON(b []byte) error {
	var a branchSummaryAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = BranchSummaryMessage(a)
	m.Extra = ex
	return err
}

func (m *CompactionSummaryMessage) UnmarshalJSON(b []byte) error {
	var a compactionSummaryAlias
	ex, err := jsonx.UnmarshalObject(b, &a)
	*m = CompactionSummaryMessage(a)
	m.Extra = ex
	return err
}

// DecodeMessage reads any message by its role. An unknown role is kept
// verbatim as *UnknownMessage; "hookMessage" (session v2) reads as custom.
func DecodeMessage(raw []byte) (Message, error) {
	var head struct {
		Role string `json:"role"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	var m Message
	switch head.Role {
	case RoleSystem:
		m = &SystemMessage{}
	case RoleUser:
		m = &UserMessage{}
	case RoleAssistant:
		m = &AssistantMessage{}
	case RoleToolResult:
		m = &ToolResultMessage{}
	case RoleBashExecution:
		m = &BashExecutionMessage{}
	case RoleCustom:
		m = &CustomMessage{}
	case RoleBranchSummary:
		m = &BranchSummaryMessage{}
	case RoleCompactionSummary:
		m = &CompactionSummaryMessage{}
	case "":
		return nil, fmt.Errorf("message has no role")
	default:
		return &UnknownMessage{Role: head.Role, Raw: append(json.RawMessage(nil), raw...)}, nil
	}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("%s message: %w", head.Role, err)
	}
	return m, nil
}

// Messages is a list of messages that decodes by role.
type Messages []Message

// UnmarshalJSON decodes each element with DecodeMessage.
func (ms *Messages) UnmarshalJSON(b []byte) error {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return err
	}
	out := make(Messages, 0, len(raws))
	for _, r := range raws {
		m, err := DecodeMessage(r)
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	*ms = out
	return nil
}

// MarshalJSON writes the list ([] when empty).
func (ms Messages) MarshalJSON() ([]byte, error) {
	if ms == nil {
		return []byte("[]"), nil
	}
	if fast() {
		if b, err := ms.appendJSON(make([]byte, 0, 1024)); err == nil {
			return b, nil
		}
	}
	return jsonx.Marshal([]Message(ms))
}
