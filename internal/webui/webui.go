// Package webui holds the built-in browser UI of web mode: the files of its
// build, embedded in the binary and served at / (docs/web.md). The source
// is in web/ at the root of the repository (Preact, marked, DOMPurify,
// highlight.js, built by Vite); its build is committed in dist/, so building
// pisces needs no Node.js. `go generate ./internal/webui` rebuilds it from
// the committed lockfile, and CI checks that the committed build is what
// the source builds to.
package webui

import (
	"embed"
	"io/fs"
)

//go:generate npm --prefix ../../web ci --no-audit --no-fund
//go:generate npm --prefix ../../web run build

//go:embed dist
var dist embed.FS

// FS returns the built-in UI's files: index.html and its assets.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("webui: the embedded build has no dist directory: " + err.Error())
	}
	return sub
}
