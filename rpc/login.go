package rpc

// Subscription logins (docs/rpc.md, "Logins"): which providers can be
// logged in to, running a login flow whose interaction arrives as
// extension_ui_request frames, and logging out. The commands take
// oh-my-pi's names and shapes (get_login_providers, login); logout is
// Pisces' own.

// Command names of the logins.
const (
	CmdGetLoginProviders = "get_login_providers"
	CmdLogin             = "login"
	CmdLogout            = "logout"
)

// Extension UI methods a login sends besides pi's notify and input.
const (
	// UIOpenURL asks the client to open an address (or show it as a
	// link): {url, instructions?, providerId}. It expects no answer, but an
	// answer with cancelled:true cancels the login.
	UIOpenURL = "open_url"
	// UICancel tells the client that a request it was shown is settled:
	// {targetId}.
	UICancel = "cancel"
)

// LoginProvider is one subscription login as get_login_providers lists it.
type LoginProvider struct {
	// ID is the provider's name (its models' provider and its key in
	// auth.json).
	ID string `json:"id"`
	// Name is what a picker shows.
	Name string `json:"name"`
	// Available says whether a login to it can run here: the provider is
	// known to this process's model registry.
	Available bool `json:"available"`
	// Authenticated says whether auth.json holds a login (OAuth) for it.
	Authenticated bool `json:"authenticated"`
	// Expires is the stored access token's expiry (Unix ms) when
	// authenticated; a login past it is refreshed when it is next used.
	Expires int64 `json:"expires,omitempty"`
}

// LoginProvidersData is get_login_providers' data.
type LoginProvidersData struct {
	Providers []LoginProvider `json:"providers"`
}

// LoginCommand runs the login flow of a provider. The flow's interaction
// comes as extension_ui_request frames to this connection (open_url with
// the address, notify with a device code, input for a pasted code or
// address); the response comes when the login has finished or failed.
type LoginCommand struct {
	ID         string `json:"id,omitempty"`
	Type       string `json:"type"`
	ProviderID string `json:"providerId"`
	// NoBrowser picks the method for a client whose browser is not on the
	// agent's machine: the copy-code or device-code flow instead of a
	// callback to a port of the agent's machine.
	NoBrowser bool `json:"noBrowser,omitempty"`
}

// LoginData is login's data.
type LoginData struct {
	ProviderID string `json:"providerId"`
}

// LogoutCommand removes a provider's stored login or key from auth.json.
type LogoutCommand struct {
	ID         string `json:"id,omitempty"`
	Type       string `json:"type"`
	ProviderID string `json:"providerId"`
}

// LogoutData is logout's data: whether anything was stored.
type LogoutData struct {
	ProviderID string `json:"providerId"`
	Removed    bool   `json:"removed"`
}

// UIResponse is the extension_ui_response a client sends to answer an
// extension_ui_request: value for input, select and editor, confirmed for
// confirm, cancelled to dismiss.
type UIResponse struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Value     *string `json:"value,omitempty"`
	Confirmed *bool   `json:"confirmed,omitempty"`
	Cancelled bool    `json:"cancelled,omitempty"`
}
