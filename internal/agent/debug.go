package agent

import (
	"io"
	"os"
)

// debugOut receives panic reports; never stdout, which belongs to the protocol.
var debugOut io.Writer = os.Stderr
