// Package fetch downloads the images that messages name by URL, for the
// providers that cannot be handed a URL (docs/rpc.md, "Images").
//
// A fetch reaches only the public internet: the URL must be http or https,
// and every connection — the first one, and the one of each redirect — is
// checked at dial time, on the address actually dialled, so that neither a
// host name that resolves (or re-resolves) to an inside address nor a
// redirect to one gets through. Loopback, private (RFC 1918, IPv6 unique
// local), link-local, carrier-grade NAT, unspecified, multicast and reserved
// addresses are refused. HTTP(S)_PROXY is ignored on purpose: through a
// proxy the address check would be the proxy's, not ours. A fetch is bounded
// in time (20 s in all, redirects and body included) and in size (20 MB),
// and what it returns must be an image.
//
// There is no switch in configuration or on the command line that lifts the
// address check; only this package's own tests can.
package fetch

import (
	"container/list"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pisces-agent/pisces/internal/lazy"
)

// Limits of one fetch.
const (
	// MaxBytes is the largest image fetched.
	MaxBytes = 20 << 20
	// Timeout bounds a whole fetch: connecting, redirects, headers and body.
	Timeout = 20 * time.Second
	// MaxRedirects is the number of redirects followed.
	MaxRedirects = 5
	// MaxURLLength is the longest URL accepted.
	MaxURLLength = 8192
)

// The cache keeps fetched images so that the turns of a conversation, which
// each send the whole history again, fetch an image once.
const (
	cacheBytes = 64 << 20 // base64 bytes kept, in all
	cacheTTL   = time.Hour
)

// Error is a fetch that failed; its message names the URL and the reason.
type Error struct {
	URL    string
	Reason string
}

func (e *Error) Error() string { return "cannot fetch image " + e.URL + ": " + e.Reason }

// CheckURL reports whether raw is a URL this package would try to fetch:
// absolute http or https with a host, at most MaxURLLength bytes. The
// address check happens later, when connecting.
func CheckURL(raw string) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("the URL is longer than %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a valid URL: %v", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return errors.New("not an absolute URL; only http and https URLs are accepted")
		}
		return fmt.Errorf("the scheme %q is not accepted; only http and https URLs are", u.Scheme)
	}
	if u.Hostname() == "" {
		return errors.New("the URL has no host")
	}
	return nil
}

// Fetcher fetches images under the limits above. Its zero value is not
// usable; use New or Default.
type Fetcher struct {
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	// allow lets this package's tests reach their local servers.
	allow func(netip.AddrPort) bool

	mu       sync.Mutex
	lru      *list.List // of *cached, most recently used first
	byURL    map[string]*list.Element
	size     int
	cacheMax int              // base64 bytes kept in all
	now      func() time.Time // the cache's clock
}

type cached struct {
	url, mimeType, data string
	at                  time.Time
}

// New returns a Fetcher with the package's limits and its own connection
// pool.
func New() *Fetcher { return newFetcher(nil, Timeout, MaxBytes) }

// Default returns the process's shared Fetcher (one cache for every
// session).
func Default() *Fetcher { return shared.Get() }

var shared = lazy.Value[*Fetcher]{New: New}

func newFetcher(allow func(netip.AddrPort) bool, timeout time.Duration, maxBytes int64) *Fetcher {
	f := &Fetcher{timeout: timeout, maxBytes: maxBytes, allow: allow,
		lru: list.New(), byURL: map[string]*list.Element{}, cacheMax: cacheBytes, now: time.Now}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: f.checkDial}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConns:        8,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return &redirectError{fmt.Sprintf("more than %d redirects", MaxRedirects)}
			}
			if err := CheckURL(req.URL.String()); err != nil {
				return &redirectError{"redirected to " + req.URL.Redacted() + ": " + err.Error()}
			}
			return nil
		},
	}
	return f
}

type redirectError struct{ reason string }

func (e *redirectError) Error() string { return e.reason }

// addrError is a dial refused by the address check.
type addrError struct {
	addr netip.Addr
	kind string
}

func (e *addrError) Error() string {
	return fmt.Sprintf("%s is %s; only public addresses are fetched", e.addr, e.kind)
}

// checkDial runs before every connection, on the resolved address.
func (f *Fetcher) checkDial(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unexpected dial address %q", address)
	}
	a := ap.Addr()
	if kind := Blocked(a); kind != "" && (f.allow == nil || !f.allow(ap)) {
		return &addrError{a.WithZone(""), kind}
	}
	return nil
}

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	ietf       = netip.MustParsePrefix("192.0.0.0/24")
	benchmark  = netip.MustParsePrefix("198.18.0.0/15")
	reserved4  = netip.MustParsePrefix("240.0.0.0/4")
	siteLocal6 = netip.MustParsePrefix("fec0::/10")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
)

// Blocked says what kind of address a is when a fetch must not connect to
// it ("a loopback address", ...), or "" for a public address. IPv4 inside
// IPv6 (mapped, or NAT64's well-known prefix) is judged as the IPv4 address.
func Blocked(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsPrivate():
		return "a private address"
	case cgnat.Contains(a):
		return "a shared (carrier-grade NAT) address"
	case thisNet.Contains(a), ietf.Contains(a), benchmark.Contains(a), reserved4.Contains(a),
		siteLocal6.Contains(a), nat64Local.Contains(a):
		return "a reserved address"
	}
	return ""
}

// FetchImage fetches the image at raw and returns its MIME type and its
// bytes in base64. A cancelled ctx returns ctx's error; every other failure
// is an *Error.
func (f *Fetcher) FetchImage(ctx context.Context, raw string) (mimeType, data string, err error) {
	if m, d, ok := f.lookup(raw); ok {
		return m, d, nil
	}
	fail := func(format string, args ...any) (string, string, error) {
		return "", "", &Error{URL: raw, Reason: fmt.Sprintf(format, args...)}
	}
	if err := CheckURL(raw); err != nil {
		return fail("%v", err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, f.timeout, errTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return fail("%v", err)
	}
	req.Header.Set("Accept", "image/*")
	res, err := f.client.Do(req)
	if err != nil {
		if parent.Err() != nil {
			return "", "", parent.Err()
		}
		return fail("%s", f.reason(ctx, err))
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fail("the server answered %s", res.Status)
	}
	if res.ContentLength > f.maxBytes {
		return fail("the image is %d bytes, more than the limit of %d", res.ContentLength, f.maxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, f.maxBytes+1))
	if err != nil {
		if parent.Err() != nil {
			return "", "", parent.Err()
		}
		return fail("%s", f.reason(ctx, err))
	}
	if int64(len(body)) > f.maxBytes {
		return fail("the image is larger than the limit of %d bytes", f.maxBytes)
	}
	mt, ok := imageType(res.Header.Get("Content-Type"), body)
	if !ok {
		return fail("the server sent %s, not an image", mt)
	}
	data = base64.StdEncoding.EncodeToString(body)
	f.store(raw, mt, data)
	return mt, data, nil
}

var errTimeout = errors.New("timeout")

// reason words a transport failure.
func (f *Fetcher) reason(ctx context.Context, err error) string {
	var ae *addrError
	var re *redirectError
	switch {
	case errors.As(err, &ae):
		return ae.Error()
	case errors.As(err, &re):
		return re.reason
	case context.Cause(ctx) == errTimeout:
		return fmt.Sprintf("timed out after %s", f.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// imageType is the MIME type of a fetched body: the type the content sniffs
// as when it is a known image format, else the server's image/* type. ok is
// false when neither says image; the type returned then names what it is.
func imageType(header string, body []byte) (string, bool) {
	sniffed := http.DetectContentType(body)
	if strings.HasPrefix(sniffed, "image/") {
		return sniffed, true
	}
	declared, _, err := mime.ParseMediaType(header)
	if err == nil && strings.HasPrefix(declared, "image/") {
		return declared, true
	}
	if err == nil && declared != "" {
		return declared, false
	}
	return sniffed, false
}

func (f *Fetcher) lookup(u string) (string, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	el, ok := f.byURL[u]
	if !ok {
		return "", "", false
	}
	c := el.Value.(*cached)
	if f.now().Sub(c.at) > cacheTTL {
		f.remove(el)
		return "", "", false
	}
	f.lru.MoveToFront(el)
	return c.mimeType, c.data, true
}

func (f *Fetcher) store(u, mimeType, data string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(data) > f.cacheMax {
		return
	}
	if el, ok := f.byURL[u]; ok {
		f.remove(el)
	}
	for f.size+len(data) > f.cacheMax {
		f.remove(f.lru.Back())
	}
	f.byURL[u] = f.lru.PushFront(&cached{u, mimeType, data, f.now()})
	f.size += len(data)
}

func (f *Fetcher) remove(el *list.Element) {
	c := f.lru.Remove(el).(*cached)
	delete(f.byURL, c.url)
	f.size -= len(c.data)
}
