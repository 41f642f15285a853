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
func runRPC(sess *core.Session, env *environment, stdio IO, fl *fileLock, readOnly string) int {
	a := env.args
	if len(a.FileArgs) > 0 {
		fmt.Fprintln(stdio.Stderr, "pisces: @file arguments are not accepted in rpc mode; send the file's contents in a prompt command")
		return 2
	}
	if len(a.Messages) > 0 {
		fmt.Fprintln(stdio.Stderr, "pisces: messages on the command line are not accepted in rpc mode; send a prompt command")
		return 2
	}
	hub := rpcmode.NewHub(sess, rpcmode.HubOptions{ReadOnly: readOnly})
	srv := rpcmode.NewConn(hub, stdio.Stdout, rpcmode.Options{
		Sessions:      lockedSessions{fl},
		DeltaInterval: a.RPCDeltaInterval,
		Legacy:        a.RPCCompat == "legacy",
		OMP:           a.RPCCompat == "omp",
		Stderr:        stdio.Stderr,
		OnReady: func(srv *rpcmode.Server) {
			if env.extensions != nil {
				env.extensions.SetUI(srv.UI())
			}
		},
	})
	ctx, sig, stop := signalContext()
	defer stop()
	// Serve runs on this goroutine: its stack grew while the packages were
	// initialised, so handling the first commands does not grow (and copy)
	// a fresh goroutine's stack, which walks every frame's tables in the
	// binary. The watcher stops Serve on a shutdown request or a signal.
	stopServe := make(chan struct{})
	served := make(chan struct{})
	watched := make(chan struct{})
	code := -1 // set by the watcher when it stopped Serve
	go func() {
		defer close(watched)
		select {
		case <-served:
			// stdin ended: the server let the running work finish.
		case <-sess.ShutdownRequested():
			// An extension asked to shut down: finish the work, flush, exit 0.
			sess.WaitIdle()
			close(stopServe)
			code = 0
		case <-ctx.Done():
			// The MCP servers stop while the run is aborted and the
			// output drains (Main's closeMCP then waits for them).
			go env.closeMCP()
			sess.Abort()
			sess.AbortBash()
			close(stopServe)
			code = 143
			if s := sig(); s != nil {
				code = exitCodeFor(s)
			}
		}
	}()
	err := srv.Serve(stdio.Stdin, stopServe)
	close(served)
	<-watched
	if code >= 0 {
		return code
	}
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "pisces: reading stdin: %v\n", err)
	}
	return 0
}
