package rpcmode

import "github.com/pisces-agent/pisces/rpc"

// legacyEvent maps an event to the older wire (--rpc-compat legacy).
// message_update snapshots are produced by the core (Options.LegacyWire).
func legacyEvent(ev rpc.Event) rpc.Event {
	switch e := ev.(type) {
	case *rpc.CompactionStartEvent:
		c := *e
		c.Type = rpc.EventAutoCompactionStart
		return &legacyRenamed{ev: &c, typ: rpc.EventAutoCompactionStart}
	case *rpc.CompactionEndEvent:
		c := *e
		c.Type = rpc.EventAutoCompactionEnd
		return &legacyRenamed{ev: &c, typ: rpc.EventAutoCompactionEnd}
	case *rpc.ExtensionErrorEvent:
		return &rpc.HookErrorEvent{Type: rpc.EventHookError, HookPath: e.ExtensionPath, Event: e.Event, Error: e.Error}
	case *rpc.NoticeEvent:
		return nil // oh-my-pi's wire only
	}
	return ev
}

// legacyRenamed carries an event whose type member was renamed.
type legacyRenamed struct {
	ev  rpc.Event
	typ string
}

func (l *legacyRenamed) EventType() string            { return l.typ }
func (l *legacyRenamed) MarshalJSON() ([]byte, error) { return rpc.Marshal(l.ev) }
