package fetch

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// server is a local test server with a request counter.
type server struct {
	*httptest.Server
	hits atomic.Int32
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) addrPort(t *testing.T) netip.AddrPort {
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	ap, err := netip.ParseAddrPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// allowing returns a fetcher that may connect to exactly these servers (and
// to nothing else that is not public).
func allowing(t *testing.T, timeout time.Duration, maxBytes int64, servers ...*server) *Fetcher {
	allowed := map[netip.AddrPort]bool{}
	for _, s := range servers {
		allowed[s.addrPort(t)] = true
	}
	return newFetcher(func(ap netip.AddrPort) bool { return allowed[ap] }, timeout, maxBytes)
}

func wantError(t *testing.T, err error, u string, reason ...string) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want *Error", err, err)
	}
	if fe.URL != u {
		t.Errorf("error URL = %q, want %q", fe.URL, u)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "cannot fetch image "+u+": ") {
		t.Errorf("error %q does not start by naming the URL", msg)
	}
	for _, r := range reason {
		if !strings.Contains(msg, r) {
			t.Errorf("error %q does not contain %q", msg, r)
		}
	}
}

func TestBlocked(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1":        "loopback",
		"127.8.9.10":       "loopback",
		"::1":              "loopback",
		"::ffff:127.0.0.1": "loopback",
		"64:ff9b::7f00:1":  "loopback", // NAT64 of 127.0.0.1
		"10.1.2.3":         "private",
		"172.16.0.1":       "private",
		"192.168.1.1":      "private",
		"fd00::1":          "private",
		"fc00::1":          "private",
		"169.254.169.254":  "link-local",
		"fe80::1":          "link-local",
		"100.64.0.1":       "carrier-grade NAT",
		"100.127.255.254":  "carrier-grade NAT",
		"0.0.0.0":          "unspecified",
		"::":               "unspecified",
		"0.1.2.3":          "reserved",
		"198.18.0.1":       "reserved",
		"255.255.255.255":  "reserved",
		"fec0::1":          "reserved",
		"224.0.0.1":        "link-local", // 224.0.0.0/24 is link-local multicast
		"239.1.2.3":        "multicast",
		"ff02::1":          "link-local",
		"ff0e::1":          "multicast",
		"8.8.8.8":          "",
		"100.128.0.1":      "",
		"172.32.0.1":       "",
		"2606:4700::1111":  "",
		"64:ff9b::808:808": "", // NAT64 of 8.8.8.8
	}
	for addr, want := range cases {
		got := Blocked(netip.MustParseAddr(addr))
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("Blocked(%s) = %q, want %q", addr, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for u, want := range map[string]string{
		"https://example.com/a.png":                 "",
		"http://example.com:8080/a?b=c":             "",
		"ftp://example.com/a.png":                   `scheme "ftp"`,
		"file:///etc/passwd":                        `scheme "file"`,
		"data:image/png;base64,iVBORw0KGgo=":        `scheme "data"`,
		"/relative/a.png":                           "not an absolute URL",
		"http:///a.png":                             "no host",
		"http://exa mple.com/":                      "not a valid URL",
		"https://example.com/" + long(MaxURLLength): "longer than",
	} {
		err := CheckURL(u)
		if want == "" {
			if err != nil {
				t.Errorf("CheckURL(%.40q) = %v, want nil", u, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%.40q) = %v, want an error containing %q", u, err, want)
		}
	}
}

func long(n int) string { return strings.Repeat("a", n) }

// The guard refuses inside addresses at connection time, before anything is
// sent; these addresses need no server.
func TestRefusesInsideAddresses(t *testing.T) {
	f := New()
	for u, kind := range map[string]string{
		"http://127.0.0.1:9/a.png":                 "127.0.0.1 is a loopback address",
		"http://10.0.0.1/a.png":                    "10.0.0.1 is a private address",
		"http://192.168.0.1/a.png":                 "192.168.0.1 is a private address",
		"https://169.254.169.254/latest/meta-data": "169.254.169.254 is a link-local address",
		"http://100.64.0.1/a.png":                  "100.64.0.1 is a shared (carrier-grade NAT) address",
		"http://0.0.0.0:9/a.png":                   "0.0.0.0 is an unspecified address",
		"http://[::ffff:127.0.0.1]:9/a.png":        "127.0.0.1 is a loopback address",
	} {
		_, _, err := f.FetchImage(context.Background(), u)
		wantError(t, err, u, kind, "only public addresses are fetched")
	}
}

// IPv6 addresses are checked the same way; called directly, since a test
// machine may have no IPv6 sockets to dial from.
func TestRefusesInsideIPv6Addresses(t *testing.T) {
	f := New()
	for addr, want := range map[string]string{
		"[::1]:443":           "::1 is a loopback address; only public addresses are fetched",
		"[fd12::1]:80":        "fd12::1 is a private address; only public addresses are fetched",
		"[fe80::1%eth0]:80":   "fe80::1 is a link-local address; only public addresses are fetched",
		"[64:ff9b::a00:1]:80": "64:ff9b::a00:1 is a private address; only public addresses are fetched", // NAT64 of 10.0.0.1
	} {
		err := f.checkDial("tcp6", addr, nil)
		if err == nil || err.Error() != want {
			t.Errorf("checkDial(%s) = %v, want %q", addr, err, want)
		}
	}
	if err := f.checkDial("tcp6", "[2606:4700::1111]:443", nil); err != nil {
		t.Errorf("a public IPv6 address: %v", err)
	}
}

// A host name is checked on the address it resolves to.
func TestRefusesNameResolvingToLoopback(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(pngBytes(t)) })
	u := "http://localhost:" + strconv.Itoa(int(s.addrPort(t).Port())) + "/a.png"
	_, _, err := New().FetchImage(context.Background(), u)
	wantError(t, err, u, "is a loopback address")
	if n := s.hits.Load(); n != 0 {
		t.Errorf("the server got %d requests, want 0", n)
	}
}

func TestFetchesAndCaches(t *testing.T) {
	img := pngBytes(t)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "image/*" {
			t.Errorf("Accept = %q", r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "application/octet-stream") // the content decides
		w.Write(img)
	})
	f := allowing(t, Timeout, MaxBytes, s)
	for i := 0; i < 2; i++ {
		mt, data, err := f.FetchImage(context.Background(), s.URL+"/cat.png")
		if err != nil {
			t.Fatal(err)
		}
		if mt != "image/png" || data != base64.StdEncoding.EncodeToString(img) {
			t.Fatalf("got %s %.20s…, want image/png and the bytes served", mt, data)
		}
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("the server got %d requests for one URL fetched twice, want 1", n)
	}
}

func TestDeclaredImageTypeWhenNotSniffable(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/heic")
		w.Write([]byte("\x00\x00\x00\x18ftypheic"))
	})
	mt, _, err := allowing(t, Timeout, MaxBytes, s).FetchImage(context.Background(), s.URL)
	if err != nil || mt != "image/heic" {
		t.Fatalf("got %q, %v; want image/heic", mt, err)
	}
}

func TestRefusesWhatIsNotAnImage(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body>login</body></html>"))
	})
	_, _, err := allowing(t, Timeout, MaxBytes, s).FetchImage(context.Background(), s.URL+"/page")
	wantError(t, err, s.URL+"/page", "the server sent text/html, not an image")
}

func TestHTTPErrorStatus(t *testing.T) {
	s := newServer(t, http.NotFound)
	_, _, err := allowing(t, Timeout, MaxBytes, s).FetchImage(context.Background(), s.URL+"/gone.png")
	wantError(t, err, s.URL+"/gone.png", "the server answered 404 Not Found")
}

func TestRedirects(t *testing.T) {
	img := pngBytes(t)
	inside := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(img) })
	port := strconv.Itoa(int(inside.addrPort(t).Port()))
	target := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(img) })
	var outside *server
	outside = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+port+"/secret.png", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+port+"/secret.png", http.StatusMovedPermanently)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-allowed":
			http.Redirect(w, r, target.URL+"/ok.png", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, outside.URL+"/loop", http.StatusFound)
		}
	})
	f := allowing(t, Timeout, MaxBytes, outside, target)

	// localhost may resolve to ::1 first: the kind is what counts.
	for _, p := range []string{"/to-loopback", "/to-localhost"} {
		_, _, err := f.FetchImage(context.Background(), outside.URL+p)
		wantError(t, err, outside.URL+p, "is a loopback address")
	}
	if n := inside.hits.Load(); n != 0 {
		t.Errorf("the inside server got %d requests through redirects, want 0", n)
	}
	_, _, err := f.FetchImage(context.Background(), outside.URL+"/to-file")
	wantError(t, err, outside.URL+"/to-file", `redirected to file:///etc/passwd: the scheme "file" is not accepted`)

	before := outside.hits.Load()
	_, _, err = f.FetchImage(context.Background(), outside.URL+"/loop")
	wantError(t, err, outside.URL+"/loop", "more than 5 redirects")
	if n := outside.hits.Load() - before; n != MaxRedirects+1 {
		t.Errorf("a redirect loop made %d requests, want %d", n, MaxRedirects+1)
	}

	mt, _, err := f.FetchImage(context.Background(), outside.URL+"/to-allowed")
	if err != nil || mt != "image/png" {
		t.Errorf("an allowed redirect: %q, %v", mt, err)
	}
}

func TestSizeLimit(t *testing.T) {
	const limit = 1024
	big := append(pngBytes(t), make([]byte, 2*limit)...)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chunked" {
			// No Content-Length: the limit is found while reading.
			w.Write(big[:10])
			w.(http.Flusher).Flush()
			w.Write(big[10:])
			return
		}
		w.Header().Set("Content-Length", "2048")
		w.Write(big[:2048])
	})
	f := allowing(t, Timeout, limit, s)
	_, _, err := f.FetchImage(context.Background(), s.URL+"/declared")
	wantError(t, err, s.URL+"/declared", "the image is 2048 bytes, more than the limit of 1024")
	_, _, err = f.FetchImage(context.Background(), s.URL+"/chunked")
	wantError(t, err, s.URL+"/chunked", "the image is larger than the limit of 1024 bytes")

	small := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(big[:limit]) })
	if _, _, err := allowing(t, Timeout, limit, small).FetchImage(context.Background(), small.URL); err != nil {
		t.Errorf("an image of exactly the limit: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.Header().Set("Content-Type", "image/png")
			w.Write(pngBytes(t)[:8])
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	f := allowing(t, 50*time.Millisecond, MaxBytes, s)
	for _, p := range []string{"/slow-headers", "/slow-body"} {
		_, _, err := f.FetchImage(context.Background(), s.URL+p)
		wantError(t, err, s.URL+p, "timed out after 50ms")
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	_, _, err := allowing(t, Timeout, MaxBytes, s).FetchImage(ctx, s.URL)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestRefusesBadURLBeforeConnecting(t *testing.T) {
	_, _, err := New().FetchImage(context.Background(), "gopher://example.com/a.png")
	wantError(t, err, "gopher://example.com/a.png", `the scheme "gopher" is not accepted`)
}

func TestCacheEvictionAndExpiry(t *testing.T) {
	img := pngBytes(t)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(img) })
	f := allowing(t, Timeout, MaxBytes, s)
	size := len(base64.StdEncoding.EncodeToString(img))
	f.cacheMax = 2 * size // room for two images
	clock := time.Now()
	f.now = func() time.Time { return clock }
	fetchAll := func(paths ...string) {
		t.Helper()
		for _, p := range paths {
			if _, _, err := f.FetchImage(context.Background(), s.URL+p); err != nil {
				t.Fatal(err)
			}
		}
	}
	hits := func() int { return int(s.hits.Load()) }

	fetchAll("/a", "/b", "/a") // /a is now the most recently used
	if hits() != 2 {
		t.Fatalf("%d requests, want 2", hits())
	}
	fetchAll("/c") // evicts /b, the least recently used
	fetchAll("/a", "/c")
	if hits() != 3 {
		t.Errorf("%d requests after /c, /a, /c; want 3 (both cached)", hits())
	}
	fetchAll("/b")
	if hits() != 4 {
		t.Errorf("/b was not evicted")
	}
	if f.size > f.cacheMax || len(f.byURL) != 2 || f.lru.Len() != 2 {
		t.Errorf("cache holds %d bytes in %d/%d entries, limit %d", f.size, len(f.byURL), f.lru.Len(), f.cacheMax)
	}

	clock = clock.Add(cacheTTL + time.Second)
	fetchAll("/b")
	if hits() != 5 {
		t.Errorf("an entry older than %s was used", cacheTTL)
	}
}
