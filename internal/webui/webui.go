// Package webui is the slot of the built-in browser UI of web mode: the
// files of its build, served at / (docs/web.md). The UI is not part of
// this build yet, so FS returns nil and web mode's / explains how to serve
// a UI build with --serve-ui or connect a client to /ws.
package webui

import "io/fs"

// FS returns the built-in UI's files, or nil when this build has none.
func FS() fs.FS { return nil }
