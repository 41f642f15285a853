package ai

import (
	"encoding/json"
	"fmt"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Content block types.
const (
	ContentText     = "text"
	ContentThinking = "thinking"
	ContentImage    = "image"
	ContentToolCall = "toolCall"
)

// Content is one block of a message: text, thinking, image or toolCall. Only
// the fields of its Type are written, in pi's key order.
type Content struct {
	Type string

	// text
	Text          string
	TextSignature string

	// thinking
	Thinking          string
	ThinkingSignature string
	Redacted          bool

	// image: Data (base64) and MimeType, or URL for an image the message
	// names by address (fetched or passed on when a provider request is
	// built; see ImageFetcher)
	Data     string
	MimeType string
	URL      string

	// toolCall
	ID               string
	Name             string
	Arguments        json.RawMessage // a JSON object, kept byte for byte
	ThoughtSignature string
	ArgumentsError   string
	Namespace        string

	Extra jsonx.Extra
}

// Text returns a text block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Image returns an image block.
func Image(data, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MimeType: mimeType}
}

// ImageURL returns an image block that names its image by URL.
func ImageURL(url string) Content { return Content{Type: ContentImage, URL: url} }

// IsImageURL reports whether c is an image given by URL.
func (c Content) IsImageURL() bool { return c.Type == ContentImage && c.URL != "" }

type textJSON struct {
	Type          string `json:"type"`
	Text          string `json:"text"`
	TextSignature string `json:"textSignature,omitempty"`
}

type thinkingJSON struct {
	Type              string `json:"type"`
	Thinking          string `json:"thinking"`
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	Redacted          bool   `json:"redacted,omitempty"`
}

type imageJSON struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// imageURLJSON is an image given by URL: data and mimeType are written only
// when set. It also reads every image block.
type imageURLJSON struct {
	Type     string `json:"type"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	URL      string `json:"url,omitempty"`
}

type toolCallJSON struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
	ArgumentsError   string          `json:"argumentsError,omitempty"`
	Namespace        string          `json:"namespace,omitempty"`
}

type otherJSON struct {
	Type string `json:"type"`
}

// MarshalJSON writes the block with the keys of its type.
func (c Content) MarshalJSON() ([]byte, error) {
	if fast() {
		if b, err := c.AppendJSON(make([]byte, 0, 64+len(c.Text)+len(c.Thinking)+len(c.Arguments))); err == nil {
			return b, nil
		}
	}
	switch c.Type {
	case ContentText:
		return jsonx.MarshalObject(textJSON{c.Type, c.Text, c.TextSignature}, c.Extra)
	case ContentThinking:
		return jsonx.MarshalObject(thinkingJSON{c.Type, c.Thinking, c.ThinkingSignature, c.Redacted}, c.Extra)
	case ContentImage:
		if c.URL != "" {
			return jsonx.MarshalObject(imageURLJSON{c.Type, c.Data, c.MimeType, c.URL}, c.Extra)
		}
		return jsonx.MarshalObject(imageJSON{c.Type, c.Data, c.MimeType}, c.Extra)
	case ContentToolCall:
		args := c.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return jsonx.MarshalObject(toolCallJSON{c.Type, c.ID, c.Name, args, c.ThoughtSignature, c.ArgumentsError, c.Namespace}, c.Extra)
	default:
		return jsonx.MarshalObject(otherJSON{c.Type}, c.Extra)
	}
}

// UnmarshalJSON reads a block of any type; unknown members are kept.
func (c *Content) UnmarshalJSON(data []byte) error {
	var head otherJSON
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	*c = Content{Type: head.Type}
	var err error
	switch head.Type {
	case ContentText:
		var v textJSON
		if c.Extra, err = jsonx.UnmarshalObject(data, &v); err == nil {
			c.Text, c.TextSignature = v.Text, v.TextSignature
		}
	case ContentThinking:
		var v thinkingJSON
		if c.Extra, err = jsonx.UnmarshalObject(data, &v); err == nil {
			c.Thinking, c.ThinkingSignature, c.Redacted = v.Thinking, v.ThinkingSignature, v.Redacted
		}
	case ContentImage:
		var v imageURLJSON
		if c.Extra, err = jsonx.UnmarshalObject(data, &v); err == nil {
			c.Data, c.MimeType, c.URL = v.Data, v.MimeType, v.URL
		}
	case ContentToolCall:
		var v toolCallJSON
		if c.Extra, err = jsonx.UnmarshalObject(data, &v); err == nil {
			c.ID, c.Name, c.Arguments = v.ID, v.Name, v.Arguments
			c.ThoughtSignature, c.ArgumentsError, c.Namespace = v.ThoughtSignature, v.ArgumentsError, v.Namespace
		}
	case "":
		return fmt.Errorf("content block has no type")
	default:
		c.Extra, err = jsonx.UnmarshalObject(data, &head)
	}
	return err
}

// UserContent is a user message's content: either a plain string or a list
// of blocks. Which form was read is kept so that it is written back the same.
type UserContent struct {
	IsString bool
	Str      string
	Blocks   []Content
}

// StringContent returns content written as a plain JSON string.
func StringContent(s string) UserContent { return UserContent{IsString: true, Str: s} }

// BlockContent returns content written as an array of blocks.
func BlockContent(blocks ...Content) UserContent { return UserContent{Blocks: blocks} }

// AsBlocks returns the content as blocks (a string becomes one text block).
func (u UserContent) AsBlocks() []Content {
	if u.IsString {
		return []Content{Text(u.Str)}
	}
	return u.Blocks
}

// PlainText joins the text of all text blocks with newlines.
func (u UserContent) PlainText() string {
	if u.IsString {
		return u.Str
	}
	return JoinText(u.Blocks, "\n")
}

// MarshalJSON writes a string or an array.
func (u UserContent) MarshalJSON() ([]byte, error) {
	if u.IsString {
		return jsonx.Marshal(u.Str)
	}
	if u.Blocks == nil {
		return []byte("[]"), nil
	}
	return jsonx.Marshal(u.Blocks)
}

// UnmarshalJSON reads a string or an array.
func (u *UserContent) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		u.IsString = true
		u.Blocks = nil
		return json.Unmarshal(data, &u.Str)
	}
	u.IsString = false
	return json.Unmarshal(data, &u.Blocks)
}

// JoinText concatenates the text blocks of content with sep.
func JoinText(content []Content, sep string) string {
	out := ""
	first := true
	for _, c := range content {
		if c.Type != ContentText {
			continue
		}
		if !first {
			out += sep
		}
		first = false
		out += c.Text
	}
	return out
}
