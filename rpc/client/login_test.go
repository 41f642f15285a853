package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pisces-agent/pisces/internal/auth"
	"github.com/pisces-agent/pisces/internal/auth/authtest"
	"github.com/pisces-agent/pisces/rpc"
	"github.com/pisces-agent/pisces/rpc/client"
)

// TestLogin drives a device-code login (OpenAI Codex) of a pisces process
// through the client against a local server speaking OpenAI's device wire:
// the address and code arrive as extension_ui_requests while Login waits,
// the login lands in auth.json, the provider's models become available
// in the same process, and Logout removes it.
func TestLogin(t *testing.T) {
	srv := authtest.New(t)
	srv.Set(func(s *authtest.Server) { s.Interval, s.Pending = 1, 1 })
	t.Setenv(auth.ServerEnv, srv.URL)
	t.Setenv("OPENAI_API_KEY", "")
	c := start(t, `{"turns":[]}`, false)
	ctx := ctxFor(t)

	ps, err := c.GetLoginProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range ps.Providers {
		ids = append(ids, p.ID)
		if p.Authenticated || !p.Available {
			t.Errorf("before the login: %+v", p)
		}
	}
	if strings.Join(ids, ",") != "anthropic,openai-codex,github-copilot,openai" {
		t.Errorf("providers %v", ids)
	}

	type req struct {
		Method, URL, Instructions, Message, ProviderID string
	}
	seen := make(chan req, 8)
	go func() {
		for ev := range c.Events() {
			if ev.Type != "extension_ui_request" {
				continue
			}
			var r req
			if ev.Unmarshal(&r) == nil {
				seen <- r
			}
		}
	}()
	d, err := c.Login(ctx, "openai-codex", true)
	if err != nil {
		t.Fatalf("Login: %v; stderr:\n%s", err, c.Stderr())
	}
	if d.ProviderID != "openai-codex" {
		t.Errorf("data %+v", d)
	}
	var got []req
	for len(got) < 2 {
		select {
		case r := <-seen:
			got = append(got, r)
		case <-time.After(time.Minute):
			t.Fatalf("requests so far: %+v", got)
		}
	}
	if got[0].Method != "notify" || !strings.Contains(got[0].Message, "ABCD-1234") ||
		got[1].Method != rpc.UIOpenURL || got[1].URL != "https://auth.openai.com/codex/device" || !strings.Contains(got[1].Instructions, "ABCD-1234") ||
		got[1].ProviderID != "openai-codex" {
		t.Errorf("requests %+v", got)
	}

	ms, err := c.GetAvailableModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	codex := 0
	for _, m := range ms.Models {
		if m.Provider == "openai-codex" {
			codex++
		}
	}
	if codex == 0 {
		t.Errorf("no openai-codex model available after the login")
	}
	ps, err = c.GetLoginProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Providers {
		if p.Authenticated != (p.ID == "openai-codex") {
			t.Errorf("after the login: %+v", p)
		}
	}

	out, err := c.Logout(ctx, "openai-codex")
	if err != nil || !out.Removed {
		t.Fatalf("Logout: %+v, %v", out, err)
	}
	ps, err = c.GetLoginProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Providers {
		if p.Authenticated {
			t.Errorf("after the logout: %+v", p)
		}
	}
}

// TestLoginCancelled: a cancelled answer to the login's input ends Login
// with an error naming the cancellation.
func TestLoginCancelled(t *testing.T) {
	srv := authtest.New(t)
	t.Setenv(auth.ServerEnv, srv.URL)
	c := start(t, `{"turns":[]}`, false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for ev := range c.Events() {
			var r struct{ ID, Method string }
			if ev.Type == "extension_ui_request" && ev.Unmarshal(&r) == nil && r.Method == "input" {
				_ = c.RespondUI(rpc.UIResponse{ID: r.ID, Cancelled: true})
			}
		}
	}()
	_, err := c.Login(ctx, "anthropic", true)
	var ce *client.CommandError
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "cancelled") {
		t.Fatalf("Login: %v", err)
	}
}
