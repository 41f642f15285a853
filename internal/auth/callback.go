package auth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// callbackResult is what reached the redirect URI.
type callbackResult struct {
	code, state string
	query       map[string]string
}

// callbackServer is a loopback HTTP server that receives the browser's
// redirect with the authorization code.
type callbackServer struct {
	srv     *http.Server
	port    int
	results chan callbackResult
}

// startCallback listens on host:port (port 0: any free one) and serves
// path. When fallback is set and the port is taken, it listens on a free
// port instead.
func startCallback(host string, port int, path string, fallback bool, want func(state string) bool) (*callbackServer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil && fallback && port != 0 {
		ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	if err != nil {
		return nil, err
	}
	cs := &callbackServer{port: ln.Addr().(*net.TCPAddr).Port, results: make(chan callbackResult, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if e := q.Get("error"); e != "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, "<p>Login failed: %s</p>", html.EscapeString(e+" "+q.Get("error_description")))
			return
		}
		code, state := q.Get("code"), q.Get("state")
		if code == "" || !want(state) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "<p>Login failed: the answer has no code or its state does not match.</p>")
			return
		}
		fmt.Fprint(w, "<p>Logged in. You can close this window and go back to the terminal.</p>")
		res := callbackResult{code: code, state: state, query: map[string]string{}}
		for k := range q {
			res.query[k] = q.Get(k)
		}
		select {
		case cs.results <- res:
		default:
		}
	})
	cs.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go cs.srv.Serve(ln)
	return cs, nil
}

func (cs *callbackServer) close() {
	if cs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = cs.srv.Shutdown(ctx)
	}
}

// waitCode waits for the browser's redirect (when cs is not nil) and, at
// the same time, for the user to paste the redirect URL or the code. check
// validates a pasted state ("" when none was pasted).
func waitCode(ctx context.Context, cs *callbackServer, ui *LoginUI, question string, check func(state string) error) (callbackResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pasted := make(chan callbackResult, 1)
	perr := make(chan error, 1)
	if ui != nil && ui.Prompt != nil {
		go func() {
			for {
				line, err := ui.Prompt(ctx, question)
				if err != nil {
					perr <- err
					return
				}
				code, state := parseCodeInput(line)
				if code == "" {
					continue
				}
				if err := check(state); err != nil {
					ui.show(err.Error())
					continue
				}
				r := callbackResult{code: code, state: state, query: map[string]string{}}
				if u, err := url.Parse(strings.TrimSpace(line)); err == nil && u.Host != "" {
					for k := range u.Query() {
						r.query[k] = u.Query().Get(k)
					}
				}
				pasted <- r
				return
			}
		}()
	} else if cs == nil {
		return callbackResult{}, errors.New("this login needs the code typed by the user, and there is no one to ask")
	}
	var results chan callbackResult
	if cs != nil {
		results = cs.results
	}
	for {
		select {
		case <-ctx.Done():
			return callbackResult{}, ctx.Err()
		case r := <-results:
			return r, nil
		case r := <-pasted:
			return r, nil
		case err := <-perr:
			if cs == nil {
				return callbackResult{}, err
			}
			// No more input (end of file): keep waiting for the browser.
			perr = nil
		}
	}
}
