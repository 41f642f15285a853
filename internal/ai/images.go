package ai

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
)

// ImageFetcher fetches an image that a message names by URL (internal/fetch
// is the guarded implementation providers use).
type ImageFetcher interface {
	// FetchImage returns the image's MIME type and its bytes in base64.
	FetchImage(ctx context.Context, url string) (mimeType, data string, err error)
}

// HasImageURLs reports whether any user or tool-result message holds an
// image given by URL.
func HasImageURLs(msgs []Message) bool {
	for _, m := range msgs {
		if hasImageURL(blocksOf(m)) {
			return true
		}
	}
	return false
}

func blocksOf(m Message) []Content {
	switch v := m.(type) {
	case *UserMessage:
		if !v.Content.IsString {
			return v.Content.Blocks
		}
	case *ToolResultMessage:
		return v.Content
	}
	return nil
}

func hasImageURL(blocks []Content) bool {
	for _, c := range blocks {
		if c.IsImageURL() {
			return true
		}
	}
	return false
}

// InlineImageURLs returns msgs with every image given by URL replaced by
// the fetched image (data and MIME type), for a provider that cannot be
// handed URLs. Messages without such images are shared, the others copied:
// msgs itself (the session's messages) is not changed. Each URL is fetched
// once per call.
//
// An image that cannot be fetched fails the call when it belongs to the
// latest user message or what follows it (the prompt being answered). An
// older one is replaced by a text block with the reason, so that one bad
// URL in the history does not stop the conversation. A cancelled ctx
// returns ctx's error.
func InlineImageURLs(ctx context.Context, f ImageFetcher, msgs []Message) ([]Message, error) {
	if !HasImageURLs(msgs) {
		return msgs, nil
	}
	current := 0 // index of the latest user message
	for i, m := range msgs {
		if _, ok := m.(*UserMessage); ok {
			current = i
		}
	}
	type result struct {
		mimeType, data string
		err            error
	}
	got := map[string]result{}
	inline := func(blocks []Content, older bool) ([]Content, error) {
		out := make([]Content, len(blocks))
		copy(out, blocks)
		for i, c := range out {
			if !c.IsImageURL() {
				continue
			}
			r, ok := got[c.URL]
			if !ok {
				r.mimeType, r.data, r.err = f.FetchImage(ctx, c.URL)
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				got[c.URL] = r
			}
			switch {
			case r.err == nil:
				out[i] = Image(r.data, r.mimeType)
			case older:
				out[i] = Text("[" + r.err.Error() + "]")
			default:
				return nil, r.err
			}
		}
		return out, nil
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		if !hasImageURL(blocksOf(m)) {
			continue
		}
		switch v := m.(type) {
		case *UserMessage:
			blocks, err := inline(v.Content.Blocks, i < current)
			if err != nil {
				return nil, err
			}
			cp := *v
			cp.Content = BlockContent(blocks...)
			out[i] = &cp
		case *ToolResultMessage:
			blocks, err := inline(v.Content, i < current)
			if err != nil {
				return nil, err
			}
			cp := *v
			cp.Content = blocks
			out[i] = &cp
		}
	}
	return out, nil
}

// PassImageURLs decides whether a provider request hands image URLs to the
// model's server instead of fetching them: the model's compat member
// "supportsImageUrls" when it is set, else whether the server's host is
// vendorHost (a vendor's own API, which fetches URLs itself).
func PassImageURLs(m *Model, baseURL, vendorHost string) bool {
	if len(m.Compat) > 0 {
		var c struct {
			SupportsImageURLs *bool `json:"supportsImageUrls"`
		}
		if json.Unmarshal(m.Compat, &c) == nil && c.SupportsImageURLs != nil {
			return *c.SupportsImageURLs
		}
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	return err == nil && strings.EqualFold(u.Hostname(), vendorHost)
}

// InlineRequestImages returns req, or when its messages hold image URLs a
// copy of it whose messages have them fetched (InlineImageURLs).
func InlineRequestImages(ctx context.Context, f ImageFetcher, req *Request) (*Request, error) {
	if !HasImageURLs(req.Messages) {
		return req, nil
	}
	msgs, err := InlineImageURLs(ctx, f, req.Messages)
	if err != nil {
		return nil, err
	}
	r := *req
	r.Messages = msgs
	return &r, nil
}
