//go:build unix

package web

import (
	"context"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A client that never reads is dropped after the write timeout, and the
// run and another client on the same session never wait for it.
//
// The stalled client's receive buffer is fixed small, so a modest text
// (sent again whole in text_end, message_end, turn_end and agent_end)
// fills the socket and the server's writes to it block. The write
// timeout is long enough that the client which does read, on a loaded
// machine under -race, is never the one cut off.
func TestStalledReaderDelaysNoOne(t *testing.T) {
	script := `{"chunkSize":65536,"turns":[{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}]}`
	ts := newTestServer(t, script, func(o *Options) { o.WriteTimeout = 15 * time.Second })
	stalled, err := ts.dialStalled()
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()
	b := ts.dial("")
	b.event("ready", 1)
	waitClients(t, ts, 2)
	b.call("p1", `{"id":"p1","type":"prompt","message":"hi"}`)
	b.event("agent_settled", 1)
	// The stalled client is dropped; the server counts one client again.
	waitClients(t, ts, 1)
}

// dialStalled connects with a 16 KB receive buffer and never reads.
func (ts *testServer) dialStalled() (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	c, _, err := websocket.Dial(ctx, ts.ws+"?token="+testToken, &websocket.DialOptions{HTTPClient: hc})
	return c, err
}
