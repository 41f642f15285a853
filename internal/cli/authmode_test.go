package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pisces-agent/pisces/internal/cli"
)

// An auth.json that other users can read draws one warning on stderr per
// process, naming the file and the fix.
func TestAuthJSONOpenToOthersWarnsOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes")
	}
	agentDir := t.TempDir()
	path := filepath.Join(agentDir, "auth.json")
	if err := os.WriteFile(path, []byte(`{"openai":{"type":"api_key","key":"sk-test"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		var stdout, stderr bytes.Buffer
		code := cli.Main([]string{"--agent-dir", agentDir, "--list-models"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		return stderr.String()
	}
	first := run()
	if strings.Count(first, "chmod 600 "+path) != 1 || !strings.Contains(first, "mode 0644") {
		t.Fatalf("stderr:\n%s", first)
	}
	if second := run(); strings.Contains(second, "auth.json") {
		t.Fatalf("warned again in the same process:\n%s", second)
	}
}
