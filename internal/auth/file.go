package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pisces-agent/pisces/internal/jsonx"
)

// Credential is one provider's entry of auth.json: an API key
// ({"type":"api_key","key":…}) or an OAuth login ({"type":"oauth",
// "refresh","access","expires"} plus the provider's extra fields).
type Credential struct {
	Type string `json:"type"`
	// api_key
	Key string          `json:"key,omitempty"`
	Env json.RawMessage `json:"env,omitempty"`
	// oauth
	Refresh string `json:"refresh,omitempty"`
	Access  string `json:"access,omitempty"`
	// Expires is when Access stops being used, in Unix milliseconds
	// (each provider stores it with its margin already taken off).
	Expires int64 `json:"expires,omitempty"`
	// Provider extras.
	AccountID         string   `json:"accountId,omitempty"`         // openai-codex
	EnterpriseURL     string   `json:"enterpriseUrl,omitempty"`     // github-copilot
	AvailableModelIDs []string `json:"availableModelIds,omitempty"` // github-copilot
	ClientID          string   `json:"clientId,omitempty"`          // openai (ChatGPT)
	Scopes            []string `json:"scopes,omitempty"`            // openai (ChatGPT)
}

// Types of credential.
const (
	TypeAPIKey = "api_key"
	TypeOAuth  = "oauth"
)

// IsOAuth reports whether c is an OAuth login.
func (c *Credential) IsOAuth() bool { return c != nil && c.Type == TypeOAuth }

// entry is one member of auth.json as it is in the file.
type entry struct {
	name string
	raw  json.RawMessage
}

// authFile is auth.json's members in file order.
type authFile struct {
	entries []entry
}

func (f *authFile) find(name string) int {
	for i := range f.entries {
		if f.entries[i].name == name {
			return i
		}
	}
	return -1
}

// get decodes a provider's entry (nil, nil when there is none). An oauth
// entry must have access, refresh and expires, as pi requires.
func (f *authFile) get(name string) (*Credential, error) {
	i := f.find(name)
	if i < 0 {
		return nil, nil
	}
	return decodeCredential(name, f.entries[i].raw)
}

func decodeCredential(name string, raw json.RawMessage) (*Credential, error) {
	var c Credential
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("entry %q: %s", name, jsonx.PlainError(raw, err))
	}
	switch c.Type {
	case TypeAPIKey:
	case TypeOAuth:
		var shape struct {
			Access  *string  `json:"access"`
			Refresh *string  `json:"refresh"`
			Expires *float64 `json:"expires"`
		}
		_ = json.Unmarshal(raw, &shape)
		if shape.Access == nil || shape.Refresh == nil || shape.Expires == nil {
			return nil, fmt.Errorf("entry %q: an oauth entry needs access, refresh and expires", name)
		}
	default:
		return nil, fmt.Errorf("entry %q: unknown type %q (want api_key or oauth)", name, c.Type)
	}
	return &c, nil
}

// set replaces (or appends) a provider's whole entry; nil removes it.
func (f *authFile) set(name string, c *Credential) error {
	i := f.find(name)
	if c == nil {
		if i >= 0 {
			f.entries = append(f.entries[:i], f.entries[i+1:]...)
		}
		return nil
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if i >= 0 {
		f.entries[i].raw = raw
	} else {
		f.entries = append(f.entries, entry{name: name, raw: raw})
	}
	return nil
}

// parseAuthFile parses auth.json (a BOM is ignored; empty is {}).
func parseAuthFile(data []byte) (*authFile, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return &authFile{}, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, errors.New(jsonx.PlainError(data, err))
	}
	f := &authFile{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if i := f.find(name); i >= 0 { // a repeated key: the last wins, as in JSON.parse
			f.entries[i].raw = raw
			continue
		}
		f.entries = append(f.entries, entry{name: name, raw: raw})
	}
	return f, nil
}

// encode writes the file as pi does: JSON.stringify(data, null, 2), with
// no trailing newline.
func (f *authFile) encode() ([]byte, error) {
	var b bytes.Buffer
	if len(f.entries) == 0 {
		return []byte("{}"), nil
	}
	b.WriteString("{")
	for i, e := range f.entries {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		b.Write(jsonx.AppendString(nil, e.name))
		b.WriteString(": ")
		var v bytes.Buffer
		if err := json.Indent(&v, e.raw, "  ", "  "); err != nil {
			return nil, fmt.Errorf("entry %q: %v", e.name, err)
		}
		b.Write(v.Bytes())
	}
	b.WriteString("\n}")
	return b.Bytes(), nil
}

// ensureFile creates auth.json as "{}" with mode 0600 (and its directory
// with 0700) when it does not exist; an existing file is left as it is.
func ensureFile(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte("{}"))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// writeInPlace truncates the file and writes data into it, through a
// symbolic link and keeping the file's owner, mode and ACLs, as pi does.
// Readers that see a short or empty file read it again under the lock.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
