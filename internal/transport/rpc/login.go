package rpcmode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/models"
	"github.com/pisces-agent/pisces/rpc"
)

// Subscription logins over the protocol (docs/rpc.md, "Logins"): the
// login command runs a flow of internal/auth whose interaction goes to the
// connection that asked, and to it alone, as extension_ui_request frames:
// open_url with the address to open, notify with an instruction (a device
// code), input for a pasted code or address. A connection runs one login
// at a time; abort, a cancelled answer to one of the login's requests and
// the connection's end cancel it.

// loginRun is the login a connection is running.
type loginRun struct {
	s        *Server
	provider string
	cancel   context.CancelFunc

	mu        sync.Mutex
	requests  map[string]chan loginAnswer // the requests sent; an input's answer goes to its channel
	lastShown string                      // the last instruction, repeated in the next open_url
	cancelled bool                        // cancelled by the client (not by the flow's end)
}

type loginAnswer struct {
	value     *string
	cancelled bool
}

// errLoginCancelled is what a prompt returns when the client cancelled.
var errLoginCancelled = errors.New("login cancelled")

func (s *call) loginProviders([]byte) (any, error) {
	reg := s.sess.Models()
	store := reg.Auth()
	out := rpc.LoginProvidersData{Providers: []rpc.LoginProvider{}}
	for _, p := range auth.Providers() {
		_, known := reg.Provider(p.ID())
		lp := rpc.LoginProvider{ID: p.ID(), Name: p.Name(), Available: known && store != nil}
		if store != nil {
			if c, err := store.Get(context.Background(), p.ID()); err == nil && c.IsOAuth() {
				lp.Authenticated, lp.Expires = true, c.Expires
			}
		}
		out.Providers = append(out.Providers, lp)
	}
	return out, nil
}

// loginStore returns the model registry and the auth store logins write
// to, or why there is none.
func (s *call) loginStore() (*models.Registry, *auth.Store, error) {
	reg := s.sess.Models()
	store := reg.Auth()
	if store == nil {
		return nil, nil, errors.New("Logins need auth.json in the agent directory, and this process has none")
	}
	return reg, store, nil
}

func loginIDs() string {
	var ids []string
	for _, p := range auth.Providers() {
		ids = append(ids, p.ID())
	}
	return strings.Join(ids, ", ")
}

// login runs a login flow and answers when it has ended.
func (s *call) login(line []byte) (any, error) {
	var c rpc.LoginCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	p, ok := auth.Lookup(c.ProviderID)
	if !ok {
		return nil, fmt.Errorf("Unknown login provider %q (logins: %s)", c.ProviderID, loginIDs())
	}
	reg, store, err := s.loginStore()
	if err != nil {
		return nil, err
	}
	if _, known := reg.Provider(p.ID()); !known {
		return nil, fmt.Errorf("%s is not a provider of this process (not in its model registry)", p.ID())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := &loginRun{s: s.Server, provider: p.ID(), cancel: cancel, requests: map[string]chan loginAnswer{}}
	s.mu.Lock()
	if cur := s.loginRun; cur != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("A login to %s is already running on this connection (abort cancels it)", cur.provider)
	}
	if s.detached {
		s.mu.Unlock()
		return nil, fmt.Errorf("Login to %s cancelled", p.Name())
	}
	s.loginRun = run
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.loginRun = nil
		s.mu.Unlock()
	}()
	if s.Server.aborts.Load() != s.aborts {
		// An abort came after this command and before the login started.
		return nil, fmt.Errorf("Login to %s cancelled", p.Name())
	}
	ui := &auth.LoginUI{NoBrowser: c.NoBrowser, OpenURL: run.openURL, Show: run.show, Prompt: run.prompt}
	_, err = store.Login(ctx, p.ID(), ui)
	if err != nil {
		run.mu.Lock()
		byClient := run.cancelled
		run.mu.Unlock()
		if byClient || errors.Is(err, errLoginCancelled) || errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("Login to %s cancelled", p.Name())
		}
		return nil, fmt.Errorf("Login to %s failed: %v", p.Name(), err)
	}
	reg.Rebuild(p.ID())
	return rpc.LoginData{ProviderID: p.ID()}, nil
}

// logout removes a provider's entry from auth.json.
func (s *call) logout(line []byte) (any, error) {
	var c rpc.LogoutCommand
	if err := decode(line, &c); err != nil {
		return nil, err
	}
	id := strings.TrimSpace(c.ProviderID)
	if id == "" {
		return nil, errors.New(`Invalid field "providerId": expected the name of a provider`)
	}
	reg, store, err := s.loginStore()
	if err != nil {
		return nil, err
	}
	removed, err := store.Delete(context.Background(), id)
	if err != nil {
		return nil, err
	}
	reg.Rebuild(id)
	return rpc.LogoutData{ProviderID: id, Removed: removed}, nil
}

// cancelLogin cancels the connection's login, if one is running.
func (s *Server) cancelLogin() {
	s.mu.Lock()
	run := s.loginRun
	s.mu.Unlock()
	if run != nil {
		run.mu.Lock()
		run.cancelled = true
		run.mu.Unlock()
		run.cancel()
	}
}

// deliverLogin routes an extension_ui_response to the connection's login
// when it answers one of its requests; it reports whether it did.
func (s *Server) deliverLogin(line []byte) bool {
	s.mu.Lock()
	run := s.loginRun
	s.mu.Unlock()
	if run == nil {
		return false
	}
	var r struct {
		ID        string  `json:"id"`
		Value     *string `json:"value"`
		Cancelled bool    `json:"cancelled"`
	}
	if json.Unmarshal(line, &r) != nil {
		return false
	}
	run.mu.Lock()
	ch, ok := run.requests[r.ID]
	if ok && ch != nil {
		delete(run.requests, r.ID)
	}
	if ok && r.Cancelled {
		run.cancelled = true
	}
	run.mu.Unlock()
	switch {
	case !ok:
		return false
	case ch != nil:
		ch <- loginAnswer{value: r.Value, cancelled: r.Cancelled}
	case r.Cancelled:
		// open_url and notify expect no answer; a cancelled one ends the
		// login.
		run.cancel()
	}
	return true
}

// send queues a request of the login for its connection alone; answer,
// when set, receives the answer.
func (r *loginRun) send(method string, params map[string]any, answer chan loginAnswer) string {
	id := newUIID()
	params["providerId"] = r.provider
	r.mu.Lock()
	r.requests[id] = answer
	r.mu.Unlock()
	r.s.queueRaw(uiRequest(id, method, params))
	return id
}

func (r *loginRun) show(msg string) {
	r.mu.Lock()
	r.lastShown = msg
	r.mu.Unlock()
	r.send("notify", map[string]any{"message": msg, "notifyType": "info"}, nil)
}

func (r *loginRun) openURL(u string) {
	params := map[string]any{"url": u}
	r.mu.Lock()
	if r.lastShown != "" {
		params["instructions"] = r.lastShown
		r.lastShown = ""
	}
	r.mu.Unlock()
	r.send(rpc.UIOpenURL, params, nil)
}

// prompt asks with an input dialog. A cancelled answer cancels the login;
// a question the flow no longer needs (the browser's callback came first)
// is withdrawn with cancel.
func (r *loginRun) prompt(ctx context.Context, question string) (string, error) {
	ch := make(chan loginAnswer, 1)
	id := r.send("input", map[string]any{"title": question}, ch)
	select {
	case a := <-ch:
		if a.cancelled || a.value == nil {
			r.cancel()
			return "", errLoginCancelled
		}
		return *a.value, nil
	case <-ctx.Done():
		r.mu.Lock()
		_, open := r.requests[id]
		delete(r.requests, id)
		r.mu.Unlock()
		if open {
			r.s.queueRaw(uiRequest(newUIID(), rpc.UICancel, map[string]any{"targetId": id}))
		}
		return "", ctx.Err()
	}
}
