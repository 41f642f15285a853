// Package fetchtest provides an in-memory image fetcher for the tests of
// code that fetches images (the provider adapters): it serves fixed images
// and records which URLs were asked for.
package fetchtest

import (
	"context"
	"encoding/base64"
	"sync"

	"github.com/pisces-agent/pisces/internal/fetch"
)

// Image is one image served.
type Image struct {
	MimeType string
	Data     []byte
}

// Fetcher serves Images by URL; a URL it does not hold fails as a missing
// image does (a *fetch.Error). It is safe for concurrent use.
type Fetcher struct {
	Images map[string]Image

	mu    sync.Mutex
	calls []string
}

// FetchImage implements ai.ImageFetcher.
func (f *Fetcher) FetchImage(ctx context.Context, url string) (string, string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, url)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	im, ok := f.Images[url]
	if !ok {
		return "", "", &fetch.Error{URL: url, Reason: "the server answered 404 Not Found"}
	}
	return im.MimeType, base64.StdEncoding.EncodeToString(im.Data), nil
}

// Calls returns the URLs asked for, in order.
func (f *Fetcher) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}
