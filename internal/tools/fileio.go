package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// Files reach the tools through these helpers so that no tool can block or
// read without end: only regular files are opened (a FIFO without a writer
// blocks an open, a device such as /dev/zero never ends), the open itself
// never blocks, and reads go in chunks that check the context.

// readChunkSize is the size of one read; a variable so that tests can make
// chunk boundaries fall everywhere.
var readChunkSize = 256 << 10

// errNotRegular refuses a file that is not a regular file. verb completes
// "<tool> ... regular files only", e.g. "read reads".
func errNotRegular(abs string, mode fs.FileMode, verb string) error {
	return fmt.Errorf("Not a regular file: %s is %s. %s regular files only.", abs, fileKind(mode), verb)
}

// fileKind names what a non-regular file is.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// openRegular opens abs for reading, following symbolic links, without
// blocking, and only if it is a regular file: the type is checked on the
// open descriptor, so a file swapped for a FIFO after an earlier stat is
// still refused. verb is used in the refusal (see errNotRegular).
func openRegular(abs, verb string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotRegular(abs, st.Mode(), verb)
	}
	return f, st, nil
}

// writeRegular replaces the content of abs (creating it with perm), like
// os.WriteFile, but refuses anything that is not a regular file without
// blocking on it (opening a FIFO for writing waits for a reader).
func writeRegular(abs string, data []byte, perm fs.FileMode, verb string) error {
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|openNonblock, perm)
	if err != nil {
		if st, serr := os.Stat(abs); serr == nil && !st.IsDir() && !st.Mode().IsRegular() {
			return errNotRegular(abs, st.Mode(), verb)
		}
		return err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotRegular(abs, st.Mode(), verb)
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// errAborted is returned by the chunked readers when the context ends.
var errAborted = errors.New("Operation aborted")

// readChunk reads the next chunk of r into buf, failing with errAborted once
// ctx is done.
func readChunk(ctx context.Context, r io.Reader, buf []byte) (int, error) {
	if ctx.Err() != nil {
		return 0, errAborted
	}
	return r.Read(buf)
}

// errTooLarge is returned by readAllCapped for a file over its cap.
var errTooLarge = errors.New("file too large")

// readAllCapped reads r to the end in chunks, checking ctx between them, and
// fails with errTooLarge once more than maxBytes arrive.
func readAllCapped(ctx context.Context, r io.Reader, maxBytes int64, sizeHint int64) ([]byte, error) {
	capHint := min(max(sizeHint, 0)+1, maxBytes+1)
	data := make([]byte, 0, capHint)
	buf := make([]byte, readChunkSize)
	for {
		n, err := readChunk(ctx, r, buf)
		if int64(len(data)+n) > maxBytes {
			return nil, errTooLarge
		}
		data = append(data, buf[:n]...)
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// utf8Fixer turns a byte stream into valid UTF-8 chunk by chunk, exactly as
// strings.ToValidUTF8(whole, "\uFFFD") would: each run of invalid bytes
// becomes one U+FFFD, and a character split between chunks is kept whole.
type utf8Fixer struct {
	pending []byte // an incomplete character at the end of the last chunk
	inBad   bool   // the last byte written was part of an invalid run
	out     []byte
}

// fix returns the valid text of p (valid until the next call). final says p
// is the last chunk.
func (f *utf8Fixer) fix(p []byte, final bool) []byte {
	if len(f.pending) == 0 && !f.inBad && utf8.Valid(p) {
		return p // the common case: nothing to repair, nothing held back
	}
	b := p
	if len(f.pending) > 0 {
		b = append(f.pending, p...)
		f.pending = nil
	}
	out := f.out[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			out = append(out, c)
			f.inBad = false
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			if !final && !utf8.FullRune(b[i:]) {
				f.pending = append([]byte(nil), b[i:]...)
				break
			}
			if !f.inBad {
				out = append(out, "\uFFFD"...)
				f.inBad = true
			}
			i++
			continue
		}
		out = append(out, b[i:i+size]...)
		f.inBad = false
		i += size
	}
	f.out = out
	return out
}

// formatLarge is FormatSize with gigabytes for sizes from 1 GiB (pi's
// format stops at megabytes).
func formatLarge(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1fGB", float64(n)/(1<<30))
	}
	return FormatSize(int(n))
}
