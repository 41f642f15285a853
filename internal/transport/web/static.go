package web

import (
	"errors"
	"html"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// uiPath turns a request path into a name inside the UI root ("" for the
// root itself). ok is false for a path that tries to leave the root: a ".."
// segment (the server decodes %2e%2e before this sees it), a backslash, a
// NUL byte.
func uiPath(p string) (name string, ok bool) {
	if strings.ContainsAny(p, "\\\x00") {
		return "", false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", false
		}
	}
	clean := path.Clean("/" + p)
	return strings.TrimPrefix(clean, "/"), true
}

// serveUI answers a request for the UI: the file it names, or index.html
// for any path that is not a file (a single-page app routes in the
// browser). Directories are never listed. Files are read through fsys,
// which for --serve-ui is an os.Root: no path, link included, leads out of
// the directory.
func (s *Server) serveUI(w http.ResponseWriter, r *http.Request, fsys fs.FS) {
	name, ok := uiPath(r.URL.Path)
	if !ok {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	if name == "" {
		name = "index.html"
	}
	if name != "index.html" && s.serveFile(w, r, fsys, name) {
		return
	}
	if pageLoad(r) {
		s.rememberPageSession(w, r)
	}
	if !s.serveFile(w, r, fsys, "index.html") {
		http.Error(w, "Not Found", http.StatusNotFound)
	}
}

// pageLoad reports whether a request for index.html is a browser loading
// the page (not a missing asset, such as /favicon.ico, answered with the
// page): Sec-Fetch-Dest says so where browsers send it, else the path is
// the page's own.
func pageLoad(r *http.Request) bool {
	if d := r.Header.Get("Sec-Fetch-Dest"); d != "" {
		return d == "document"
	}
	return r.URL.Path == "/" || r.URL.Path == "/index.html"
}

// sessionCookieName is the cookie that carries the session a page's
// address names (?session=) to the WebSocket connections the page opens.
func (s *Server) sessionCookieName() string {
	return "pisces_session_" + strconv.Itoa(s.port)
}

// rememberPageSession keeps the page's ?session= in a cookie, so that a
// connection from the page that names no session attaches to the session
// the page's address names: pi's web client keeps its session in the
// address but does not pass it to /ws, and reads the session its
// connection is on (get_state) before it looks at the address. A page
// loaded without ?session= removes the cookie.
func (s *Server) rememberPageSession(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("session")
	c := &http.Cookie{Name: s.sessionCookieName(), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}
	switch {
	case ref != "":
		c.Value = url.QueryEscape(ref)
	case hasCookie(r, c.Name):
		c.MaxAge = -1
	default:
		return
	}
	http.SetCookie(w, c)
}

func hasCookie(r *http.Request, name string) bool {
	_, err := r.Cookie(name)
	return err == nil
}

// pageSession returns the session the page that opened a connection named
// in its address ("" when none).
func (s *Server) pageSession(r *http.Request) string {
	c, err := r.Cookie(s.sessionCookieName())
	if err != nil {
		return ""
	}
	ref, err := url.QueryUnescape(c.Value)
	if err != nil {
		return ""
	}
	return ref
}

// serveFile writes the regular file name of fsys; false when there is
// none.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, fsys fs.FS, name string) bool {
	f, err := fsys.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	ctype := mime.TypeByExtension(filepath.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if rs, ok := f.(io.ReadSeeker); ok {
		http.ServeContent(w, r, name, fi.ModTime(), rs)
		return true
	}
	b, err := io.ReadAll(f)
	if err != nil {
		http.Error(w, "cannot read "+name, http.StatusInternalServerError)
		return true
	}
	http.ServeContent(w, r, name, fi.ModTime(), strings.NewReader(string(b)))
	return true
}

// errNoUI is the reason the placeholder page is served.
var errNoUI = errors.New("the built-in web UI is not part of this build")

// placeholderHead and placeholderTail frame the page "/" answers when this
// build has no built-in UI and no --serve-ui directory was given.
const placeholderHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pisces web mode</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
code, pre { background: #f3f3f3; padding: 0.1rem 0.3rem; border-radius: 3px; }
pre { padding: 0.6rem; overflow-x: auto; }
.warn { color: #a33; }
</style>
</head>
<body>
<h1>Pisces web mode</h1>
<p>The server is running, but the built-in web UI is not part of this build.</p>
<p>To use a browser UI, start Pisces with a UI build directory (for example the web client of pi's web fork, <code>packages/coding-agent-web/dist</code>):</p>
<pre>pisces --mode web --serve-ui DIR</pre>
<p>Or connect any client of the RPC protocol to the WebSocket (one JSON object per text frame, the commands and events of <code>docs/rpc.md</code>):</p>
`

const placeholderTail = `<p>Health: <a href="/health">/health</a>. More in <code>docs/web.md</code>.</p>
</body>
</html>
`

const (
	pageNoToken  = "<p>This server runs without a token.</p>\n"
	pageSignedIn = "<p>This browser holds the access token (a cookie): a page of this server can connect.</p>\n"
	pageNoCookie = `<p class="warn">This browser does not hold the access token, so a connection from this page is refused.
Open the <code>UI:</code> address Pisces printed when it started (it ends in <code>?token=…</code>); the token is then kept in a cookie for this server.
Other clients send it as <code>?token=</code> on the WebSocket address or as <code>Authorization: Bearer</code>.</p>
`
)

// servePlaceholder writes the placeholder page.
func (s *Server) servePlaceholder(w http.ResponseWriter, r *http.Request) {
	name, ok := uiPath(r.URL.Path)
	if !ok || (name != "" && name != "index.html") {
		http.Error(w, "Not Found: "+errNoUI.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	b.WriteString(placeholderHead)
	b.WriteString("<pre>ws://" + html.EscapeString(r.Host) + "/ws</pre>\n")
	switch {
	case s.opts.NoToken:
		b.WriteString(pageNoToken)
	case s.authorized(r):
		b.WriteString(pageSignedIn)
	default:
		b.WriteString(pageNoCookie)
	}
	b.WriteString(placeholderTail)
	io.WriteString(w, b.String())
}
