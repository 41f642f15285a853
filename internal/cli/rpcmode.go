package cli

import (
	"fmt"

	"github.com/pisces-agent/pisces/internal/core"
	rpcmode "github.com/pisces-agent/pisces/internal/transport/rpc"
)

// runRPC serves the JSONL protocol on stdin/stdout until stdin ends (exit
// 0, after the running work has settled) or a signal arrives (the work is
// aborted, tool process groups killed, the session flushed; exit 143 for
// SIGTERM, 129 for SIGHUP).
func runRPC(sess *core.Session, a *Args, stdio IO) int {
	if len(a.Messages) > 0 {
		fmt.Fprintln(stdio.Stderr, "pisces: messages on the command line are not accepted in rpc mode; send a prompt command")
		return 2
	}
	srv := rpcmode.New(sess, stdio.Stdout, rpcmode.Options{
		DeltaInterval: a.RPCDeltaInterval,
		Legacy:        a.RPCCompat == "legacy",
		Stderr:        stdio.Stderr,
	})
	ctx, sig, stop := signalContext()
	defer stop()
	done := make(chan error, 1)
	stopServe := make(chan struct{})
	go func() { done <- srv.Serve(stdio.Stdin, stopServe) }()
	select {
	case err := <-done:
		// stdin ended: the server let the running work finish.
		if err != nil {
			fmt.Fprintf(stdio.Stderr, "pisces: reading stdin: %v\n", err)
		}
		return 0
	case <-ctx.Done():
		sess.Abort()
		sess.AbortBash()
		close(stopServe)
		<-done
		if s := sig(); s != nil {
			return exitCodeFor(s)
		}
		return 143
	}
}
