package tools

// ResolvePath resolves a path as the file tools do: a leading '@' is
// dropped, unusual Unicode spaces become ASCII spaces, '~' is the home
// directory, and a relative path is taken from cwd.
func ResolvePath(p, cwd string) string { return resolvePath(p, cwd) }

// DetectImageMime returns the MIME type of an image the read tool returns
// as an attachment (png, jpeg, gif, webp, bmp), or "" for anything else.
func DetectImageMime(b []byte) string { return detectImageMime(b) }
