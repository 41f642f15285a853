package cli

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image/png"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/image/bmp"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/internal/tools"
)

// fileArguments reads the @file arguments of the command line as pi does.
// A text file is inlined as <file name="ABS">\ncontent\n</file>\n (a UTF-8
// byte order mark dropped); an image (png, jpeg, gif, webp; bmp converted
// to png) is attached and named by an empty <file name="ABS"></file>
// element; an empty file is skipped. A missing or unreadable file is an
// error naming it.
func fileArguments(args []string, cwd string) (string, []ai.Content, error) {
	var text strings.Builder
	var images []ai.Content
	for _, arg := range args {
		abs := tools.ResolvePath(arg, cwd)
		st, err := os.Stat(abs)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", nil, fmt.Errorf("@%s: file not found: %s", arg, abs)
		case err != nil:
			return "", nil, fmt.Errorf("@%s: %v", arg, err)
		case st.IsDir():
			return "", nil, fmt.Errorf("@%s: %s is a directory; name a file", arg, abs)
		case st.Size() == 0:
			continue
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", nil, fmt.Errorf("@%s: cannot read %s: %v", arg, abs, err)
		}
		mime := tools.DetectImageMime(data)
		if mime == "" {
			content := strings.TrimPrefix(strings.ToValidUTF8(string(data), "\uFFFD"), "\uFEFF")
			fmt.Fprintf(&text, "<file name=\"%s\">\n%s\n</file>\n", abs, content)
			continue
		}
		note := ""
		if mime == "image/bmp" {
			if data, err = bmpToPNG(data); err != nil {
				fmt.Fprintf(&text, "<file name=\"%s\">[Image omitted: could not be converted to a supported inline image format.]</file>\n", abs)
				continue
			}
			mime, note = "image/png", "[Image converted from image/bmp to image/png.]"
		}
		images = append(images, ai.Image(base64.StdEncoding.EncodeToString(data), mime))
		fmt.Fprintf(&text, "<file name=\"%s\">%s</file>\n", abs, note)
	}
	return text.String(), images, nil
}

// bmpToPNG converts a BMP image, which model APIs do not take, to PNG.
func bmpToPNG(data []byte) ([]byte, error) {
	img, err := bmp.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := png.Encode(&out, img); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// initialMessage joins what the first prompt is made of: piped stdin, then
// the @file text followed directly by the first message (as pi does).
func initialMessage(stdin, fileText, first string) string {
	body := fileText + first
	switch {
	case stdin == "":
		return body
	case body == "":
		return stdin
	}
	return stdin + "\n\n" + body
}
