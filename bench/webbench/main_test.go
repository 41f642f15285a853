package main

import (
	"os"
	"runtime"
	"testing"

	"github.com/pisces-agent/pisces/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// The harness at small sizes against the pisces binary: every client gets
// the whole streamed reply, every idle session loads and answers, every
// handshake gets its response.
func TestHarnessShort(t *testing.T) {
	bin, err := testenv.PiscesBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(Options{Bin: bin, Clients: 5, Deltas: 300, Sessions: 5, Handshakes: 5, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if r.FanOutClients != 5 || r.FanOutFrames == 0 || r.IdleSessions != 5 || r.Handshakes != 5 || r.HandshakeMin <= 0 || runtime.GOOS == "linux" && r.IdleRSS <= 0 {
		t.Fatalf("incomplete result: %+v", r)
	}
	t.Logf("%+v", r)
}
