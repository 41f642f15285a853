package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/settings"
)

// TestDeviceID: Sign in with ChatGPT's deviceId is created once in the
// global settings, edited in place (comments kept), and read afterwards.
func TestDeviceID(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	os.WriteFile(path, []byte("{\n  // my model\n  \"defaultModel\": \"x\",\n}\n"), 0o644)
	st, err := settings.Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := deviceID(st)()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("deviceId %q is not a UUID v4", id)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "// my model") || !strings.Contains(string(data), `"deviceId": "`+id+`"`) {
		t.Fatalf("settings.json:\n%s", data)
	}
	st2, _ := settings.Load(dir, "")
	if again, _ := deviceID(st2)(); again != id {
		t.Fatalf("second id %q, want %q", again, id)
	}
}
