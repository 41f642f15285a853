package client

import (
	"context"

	"github.com/pisces-agent/pisces/rpc"
)

// Subscription logins (docs/rpc.md, "Logins"). Login blocks until the flow
// has ended; its interaction arrives meanwhile on Events as
// extension_ui_request lines (open_url, notify, input, each with the
// providerId member), answered with RespondUI.

// GetLoginProviders lists the subscription logins and whether auth.json
// holds one for each.
func (c *Client) GetLoginProviders(ctx context.Context) (*rpc.LoginProvidersData, error) {
	return data[rpc.LoginProvidersData](c.simple(ctx, rpc.CmdGetLoginProviders))
}

// Login runs the login flow of providerID and returns once it has
// finished (nil) or failed; noBrowser picks the copy-code or device-code
// method, for a user whose browser is not on the agent's machine. Give ctx
// a deadline long enough for a person (oh-my-pi's client allows 600 s);
// Abort, or a cancelled answer to one of the login's requests, cancels it.
func (c *Client) Login(ctx context.Context, providerID string, noBrowser bool) (*rpc.LoginData, error) {
	id := c.newID()
	return data[rpc.LoginData](c.do(ctx, rpc.CmdLogin, id, rpc.LoginCommand{ID: id, Type: rpc.CmdLogin, ProviderID: providerID, NoBrowser: noBrowser}))
}

// Logout removes providerID's stored login or key from auth.json.
func (c *Client) Logout(ctx context.Context, providerID string) (*rpc.LogoutData, error) {
	id := c.newID()
	return data[rpc.LogoutData](c.do(ctx, rpc.CmdLogout, id, rpc.LogoutCommand{ID: id, Type: rpc.CmdLogout, ProviderID: providerID}))
}

// RespondUI answers an extension_ui_request (r.ID is the request's id);
// no response follows. Type is filled in.
func (c *Client) RespondUI(r rpc.UIResponse) error {
	r.Type = rpc.TypeExtensionUIResponse
	b, err := rpc.Marshal(r)
	if err != nil {
		return err
	}
	return c.write(b)
}
