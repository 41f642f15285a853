package rpcmode

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/pisces-agent/pisces/internal/ai"
	"github.com/pisces-agent/pisces/rpc"
)

// frame is one outgoing line, encoded when the writer gets to it.
type frame struct {
	ev   rpc.Event     // an event, or
	resp *rpc.Response // a response, its data in body if that is set
	body streamedData  // (written in pieces), or
	raw  []byte        // or pre-encoded JSON, or
	// msgID, when set, is written as the event's messageId member (oh-my-pi's
	// wire stamps message events).
	msgID string
	v2    bool // the switch to protocol v2: later frames are chunked

	// delta merging (message_update *_delta frames only)
	block   blockKey
	isDelta bool
	first   bool // first delta of its block: goes out at once
	// merged holds the deltas merged into this frame, in order (nil while
	// it holds one delta): appending keeps merging linear, and the text is
	// not copied until it is written (a client that stops reading lets it
	// grow to the queue's limit).
	merged []string

	// size is about the number of bytes the frame will write (its text
	// plus frameOverhead): what it counts against the queue's limit.
	size int64
}

type blockKey struct {
	msg   int64
	index int
	typ   string
}

// writer serialises every outgoing line onto stdout from one goroutine.
//
// Slow clients: queueing a frame never blocks, whoever queues it (the core
// publishes events under its own locks, and the reading goroutine answers
// commands). Consecutive deltas of one content block that are still queued
// are merged into one message_update (the first delta of a block goes out at
// once; later ones wait up to the delta interval so that more can join).
// Nothing is dropped or reordered, and *_end events still carry the whole
// content. With interval 0 no merging happens (one frame per chunk, as pi).
//
// Past the limit (bytes queued, counted as about what the frames will
// write), the producers of event streams wait in waitRoom — the core calls
// it between the events of a run and of a user bash command, holding no
// lock — until the client has read the queue back under the limit, or
// their context is cancelled (abort). So a client that stops reading holds
// the run back instead of growing the process; responses and the events of
// commands are still queued at once, and stdin is still read.
type writer struct {
	mu       sync.Mutex
	cond     *sync.Cond
	queue    []*frame
	closed   bool
	done     chan struct{}
	out      *bufio.Writer
	dst      io.Writer // what out writes to
	grown    bool      // growPipe(dst) was called
	interval time.Duration
	errOut   io.Writer

	msgSeq    int64 // counts assistant messages, to key blocks
	lastDelta time.Time
	seenBlock map[blockKey]bool

	// wake interrupts the loop's wait for more deltas when a frame is
	// queued behind the waiting one (or the writer closes): the delta
	// can no longer be merged into, so it goes out at once.
	wake chan struct{}
	// onWait, when set, is called each time the loop starts waiting out
	// the interval (tests queue frames behind the waiting delta).
	onWait func()

	limit      int64      // bytes queued past which waitRoom waits (<= 0: never)
	queued     int64      // about the bytes the queued frames will write
	peak       int64      // the most queued so far (tests)
	room       *sync.Cond // signalled when queued falls to the limit
	waiting    int        // producers in waitRoom
	onRoomWait func()     // tests: called (with mu held) when a producer starts waiting
	// chunk (loop goroutine only): protocol v2 is in effect, frames over
	// rpc.MaxFrameBytes go out as rpc_chunk lines (chunks counts them).
	chunk  bool
	chunks int64

	// tryWrite, when set (the output is a pipe), writes a short line only
	// if the pipe takes it at once. A response handed in while nothing
	// is queued or being written is then written by the goroutine that
	// made it (direct), which saves the writer's wake-up: an answer no
	// longer waits for the scheduler to run the writer after whatever
	// the command started (a run preparing its first model request).
	// A response written directly never enters the queue, so it never
	// counts against the limit.
	tryWrite func(b []byte) (bool, error)
	dbuf     []byte // the direct line (the goroutine holding direct only)
	loopBusy bool   // the loop is writing a frame it took from the queue
	direct   bool   // a goroutine is writing its response directly

	frames  int64 // lines written (for tests and benchmarks)
	directs int64 // of which written directly (tests)
	err     error
	buf     []byte   // reused to encode events (loop goroutine only)
	sp      *splicer // writes frames of megabytes in pieces (loop goroutine only)
	free    []*frame // written frames, for reuse (at most maxFreeFrames)
}

// maxFreeFrames bounds the written frames kept for reuse.
const maxFreeFrames = 64

// DefaultQueueLimit is how much output (bytes, about) may wait for a slow
// client before the run waits for it.
const DefaultQueueLimit = 64 << 20

// frameOverhead is what a queued frame counts besides its text: the frame
// and event structs and the JSON members around the text.
const frameOverhead = 256

func newWriter(w io.Writer, interval time.Duration, errOut io.Writer) *writer {
	return newWriterOnWait(w, interval, errOut, nil)
}

// newWriterOnWait is newWriter with the writer's onWait set.
func newWriterOnWait(w io.Writer, interval time.Duration, errOut io.Writer, onWait func()) *writer {
	wr := &writer{
		onWait:    onWait,
		limit:     DefaultQueueLimit,
		done:      make(chan struct{}),
		out:       bufio.NewWriterSize(w, 64<<10),
		dst:       w,
		interval:  interval,
		errOut:    errOut,
		seenBlock: map[blockKey]bool{},
		wake:      make(chan struct{}, 1),
		tryWrite:  pipeTryWrite(w),
	}
	wr.cond = sync.NewCond(&wr.mu)
	wr.room = sync.NewCond(&wr.mu)
	go wr.loop()
	return wr
}

// event queues an event, merging it into a queued delta when it can.
func (w *writer) event(ev rpc.Event) { w.eventID(ev, "") }

// eventID is event with a messageId member ("" for none).
func (w *writer) eventID(ev rpc.Event, msgID string) {
	f := frame{ev: ev, msgID: msgID} // copied to the heap only when queued (not merged)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	switch e := ev.(type) {
	case *rpc.MessageStartEvent:
		if e.Message != nil && e.Message.MessageRole() == ai.RoleAssistant {
			w.msgSeq++
		}
	case *rpc.MessageUpdateEvent:
		ame := e.AssistantMessageEvent
		if ame.IsDelta() {
			f.isDelta = true
			f.block = blockKey{w.msgSeq, ame.ContentIndex, ame.Type}
			if !w.seenBlock[f.block] {
				w.seenBlock[f.block] = true
				f.first = true
			} else if w.interval > 0 && len(w.queue) > 0 {
				last := w.queue[len(w.queue)-1]
				if last.isDelta && !last.first && last.block == f.block {
					prev := last.ev.(*rpc.MessageUpdateEvent)
					if last.merged == nil {
						// The event is shared with other subscribers:
						// merge into this frame's own copy.
						cp := *prev
						prev = &cp
						last.ev = prev
						last.merged = []string{prev.AssistantMessageEvent.Delta}
					}
					last.merged = append(last.merged, ame.Delta)
					grow := int64(len(ame.Delta))
					prev.Usage = e.Usage
					if e.Partial != nil {
						grow += int64(messageSize(e.Partial)) - int64(messageSize(prev.Partial))
						prev.Partial = e.Partial
					}
					last.size += grow
					w.countLocked(grow)
					return
				}
			}
		} else if ame.Type == ai.EvTextEnd || ame.Type == ai.EvThinkingEnd || ame.Type == ai.EvToolCallEnd {
			delete(w.seenBlock, blockKey{w.msgSeq, ame.ContentIndex, deltaTypeOf(ame.Type)})
		}
	}
	var queued *frame
	if n := len(w.free); n > 0 {
		queued = w.free[n-1]
		w.free[n-1] = nil
		w.free = w.free[:n-1]
	} else {
		queued = new(frame)
	}
	*queued = f
	queued.size = eventCost(ev)
	w.queue = append(w.queue, queued)
	w.countLocked(queued.size)
	w.signalLocked()
}

// countLocked adds n bytes to the queued count.
func (w *writer) countLocked(n int64) {
	w.queued += n
	if w.queued > w.peak {
		w.peak = w.queued
	}
}

// waitRoom returns once the queue holds no more than the limit, or the
// writer is closed, or ctx is done. Producers call it between events,
// holding no lock; queueing itself never waits.
func (w *writer) waitRoom(ctx context.Context) {
	w.mu.Lock()
	if w.limit <= 0 || w.queued <= w.limit || w.closed || ctx.Err() != nil {
		w.mu.Unlock()
		return
	}
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.room.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	w.waiting++
	if w.onRoomWait != nil {
		w.onRoomWait()
	}
	for w.queued > w.limit && !w.closed && ctx.Err() == nil {
		w.room.Wait()
	}
	w.waiting--
	w.mu.Unlock()
}

func deltaTypeOf(endType string) string {
	switch endType {
	case ai.EvTextEnd:
		return ai.EvTextDelta
	case ai.EvThinkingEnd:
		return ai.EvThinkingDelta
	default:
		return ai.EvToolCallDelta
	}
}

// bigAnswer is the size of answer from which the output pipe is grown.
const bigAnswer = 256 << 10

// response queues a response.
func (w *writer) response(r *rpc.Response) {
	w.push(&frame{resp: r})
}

// respond queues a response whose data, when body is not nil, is body's.
func (w *writer) respond(r *rpc.Response, body streamedData) {
	w.push(&frame{resp: r, body: body})
}

// pending returns the number of frames waiting to be written.
func (w *writer) pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue)
}

// backlog returns the frames waiting to be written and about the bytes
// they will write.
func (w *writer) backlog() (frames int, bytes int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue), w.queued
}

// chunkFromHere makes the frames queued after this call go out under
// protocol v2's limits (oh-my-pi's wire: rpc_chunk past 1 MiB).
func (w *writer) chunkFromHere() { w.push(&frame{v2: true}) }

// raw queues pre-encoded JSON.
func (w *writer) raw(b []byte) { w.push(&frame{raw: b}) }

// signalLocked wakes the loop, whether it waits for frames or for more
// deltas to merge.
func (w *writer) signalLocked() {
	w.cond.Signal()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *writer) push(f *frame) {
	f.size = frameOverhead + int64(len(f.raw))
	if f.resp != nil {
		f.size += int64(len(f.resp.Data)) + int64(len(f.resp.Error))
		if f.body != nil {
			f.size += int64(f.body.SizeHint())
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.tryWrite != nil && f.resp != nil && f.body == nil && len(w.queue) == 0 && !w.loopBusy && !w.direct {
		// Nothing is ahead of this response: write it here. Frames
		// queued meanwhile wait for it (the loop does not take a frame
		// while direct is set), so the order stays the order of push.
		w.direct = true
		w.mu.Unlock()
		written := w.writeDirect(f)
		w.mu.Lock()
		w.direct = false
		if !written {
			// The pipe is too full to take it at once: the loop
			// writes it, ahead of what was queued meanwhile, and it
			// counts as queued from now on.
			w.queue = append(w.queue, nil)
			copy(w.queue[1:], w.queue)
			w.queue[0] = f
			w.countLocked(f.size)
		}
		if len(w.queue) > 0 || w.closed {
			w.signalLocked()
		}
		return
	}
	w.queue = append(w.queue, f)
	w.countLocked(f.size)
	w.signalLocked()
}

// pipeAtomic is PIPE_BUF on Linux: a pipe takes a write of this size or
// less whole or not at all.
const pipeAtomic = 4096

// writeDirect writes a response on the calling goroutine when the pipe
// takes the whole line at once: a client that does not read its output
// must never stop Pisces from reading commands, so nothing here waits for
// it. It reports false when it wrote nothing. The caller holds the direct
// flag: the loop is idle and its buffer flushed.
func (w *writer) writeDirect(f *frame) bool {
	r := f.resp
	if len(r.Data)+len(r.ID)+len(r.Command)+len(r.Error) > pipeAtomic {
		return false
	}
	if w.err != nil {
		return true // the output is gone: dropped, as the loop would
	}
	head, tail := r.Frame()
	b := append(w.dbuf[:0], head...)
	b = append(b, r.Data...)
	b = append(b, tail...)
	b = append(b, '\n')
	w.dbuf = b
	ok, err := w.tryWrite(b)
	if err != nil {
		w.err = err
		return true
	}
	if !ok {
		return false
	}
	w.mu.Lock()
	w.frames++
	w.directs++
	w.mu.Unlock()
	return true
}

// close flushes everything queued and stops the writer.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.signalLocked()
	w.room.Broadcast()
	w.mu.Unlock()
	<-w.done
}

// closeWithin is close for a shutdown: it waits at most d for what is
// queued to be written and reports whether it was. A client that does not
// read cannot hold the process: the writer's goroutine is left in its
// write, and what it has not written is lost with the process.
func (w *writer) closeWithin(d time.Duration) bool {
	w.mu.Lock()
	w.closed = true
	w.signalLocked()
	w.room.Broadcast()
	w.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.done:
		return true
	case <-t.C:
		return false
	}
}

func (w *writer) loop() {
	defer close(w.done)
	var written *frame
	for {
		w.mu.Lock()
		w.loopBusy = false
		if written != nil {
			w.queued -= written.size
			if w.waiting > 0 && w.queued <= w.limit {
				w.room.Broadcast()
			}
			// Nothing refers to a written frame any more: keep it for
			// the next event (one frame per delta at interval 0).
			if len(w.free) < maxFreeFrames {
				*written = frame{}
				w.free = append(w.free, written)
			}
			written = nil
		}
		for w.direct || len(w.queue) == 0 && !w.closed {
			w.cond.Wait()
		}
		if len(w.queue) == 0 && w.closed {
			w.mu.Unlock()
			w.flush()
			return
		}
		f := w.queue[0]
		// A later delta of a block waits out the interval, so that more
		// deltas can be merged into it — only while it is the last frame
		// queued (deltas merge into the last frame; with anything behind
		// it, waiting would only delay that), and not when shutting down.
		if f.isDelta && !f.first && w.interval > 0 && !w.closed && len(w.queue) == 1 {
			if wait := time.Until(w.lastDelta.Add(w.interval)); wait > 0 {
				w.mu.Unlock()
				w.flush()
				if w.onWait != nil {
					w.onWait()
				}
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-w.wake:
					t.Stop()
				}
				continue
			}
		}
		w.queue[0] = nil
		w.queue = w.queue[1:]
		more := len(w.queue) > 0
		w.loopBusy = true
		if f.isDelta {
			w.lastDelta = time.Now()
		}
		w.mu.Unlock()
		w.write(f)
		written = f
		if !more {
			w.flush()
		}
	}
}

// maxReusedBuf bounds the encoding buffer the writer keeps between frames
// (big enough for the message_end, turn_end and agent_end of a long reply).
const maxReusedBuf = 64 << 10

func (w *writer) write(f *frame) {
	if f.v2 {
		w.chunk = true
		return
	}
	if w.chunk {
		w.writeChunked(f)
		return
	}
	var b []byte
	var err error
	switch {
	case f.raw != nil:
		b = f.raw
	case f.resp != nil:
		// Written in three pieces: a large answer is not copied again.
		head, tail := f.resp.Frame()
		if !w.grown && (len(f.resp.Data) > bigAnswer || f.body != nil && f.body.SizeHint() > bigAnswer) {
			// Only a client that gets large answers gets a larger pipe.
			w.grown = true
			growPipe(w.dst)
		}
		if w.err == nil {
			w.out.Write(head)
			if f.body != nil {
				// Frame wrote no data member: the response has no Data.
				w.out.WriteString(`,"data":`)
				f.body.WriteTo(w.out)
			} else {
				w.out.Write(f.resp.Data)
			}
			w.out.Write(tail)
			if err := w.out.WriteByte('\n'); err != nil {
				w.err = err
			}
		}
		w.mu.Lock()
		w.frames++
		w.mu.Unlock()
		return
	default:
		if f.size >= spliceMin && f.msgID == "" {
			if done, err := w.writeSpliced(f.ev, f.merged); done {
				if err != nil {
					io.WriteString(w.errOut, "pisces: cannot encode an outgoing frame: "+err.Error()+"\n")
					return
				}
				w.mu.Lock()
				w.frames++
				w.mu.Unlock()
				return
			}
		}
		if f.merged != nil {
			f.ev.(*rpc.MessageUpdateEvent).AssistantMessageEvent.Delta = strings.Join(f.merged, "")
		}
		buf := w.buf[:0]
		if f.size > maxReusedBuf {
			// A large event (a long prompt's message_end, say) is encoded
			// into a buffer of about its size, not grown to it by copies.
			buf = make([]byte, 0, f.size+f.size/8)
		}
		b, err = rpc.AppendEvent(buf, f.ev)
		b = withMessageID(b, f.msgID)
		if cap(b) <= maxReusedBuf {
			w.buf = b
		}
	}
	if err != nil {
		io.WriteString(w.errOut, "pisces: cannot encode an outgoing frame: "+err.Error()+"\n")
		return
	}
	if w.err != nil {
		return
	}
	w.out.Write(b)
	if err := w.out.WriteByte('\n'); err != nil {
		w.err = err
	}
	w.mu.Lock()
	w.frames++
	w.mu.Unlock()
}

// writeChunked writes a frame under protocol v2: whole when its line fits
// in rpc.MaxFrameBytes, else as rpc_chunk lines.
func (w *writer) writeChunked(f *frame) {
	var b []byte
	var err error
	typ := "response"
	switch {
	case f.raw != nil:
		b = f.raw
		typ = ""
	case f.resp != nil:
		var buf bytes.Buffer
		head, tail := f.resp.Frame()
		buf.Write(head)
		if f.body != nil {
			buf.WriteString(`,"data":`)
			f.body.WriteTo(&buf)
		} else {
			buf.Write(f.resp.Data)
		}
		buf.Write(tail)
		b = buf.Bytes()
	default:
		if f.merged != nil {
			f.ev.(*rpc.MessageUpdateEvent).AssistantMessageEvent.Delta = strings.Join(f.merged, "")
		}
		typ = f.ev.EventType()
		b, err = rpc.AppendEvent(w.buf[:0], f.ev)
		b = withMessageID(b, f.msgID)
		if cap(b) <= maxReusedBuf {
			w.buf = b
		}
	}
	if err != nil {
		io.WriteString(w.errOut, "pisces: cannot encode an outgoing frame: "+err.Error()+"\n")
		return
	}
	if c, ok := f.ev.(*ompAgentEnd); ok && len(b)+1 > rpc.MaxFrameBytes {
		// oh-my-pi's agent_end over 1 MiB: without what message_end sent.
		if cb, err := c.compacted(); err == nil {
			b = cb
		}
	}
	lines := [][]byte{b}
	if len(b)+1 > rpc.MaxFrameBytes {
		w.chunks++
		lines = chunkLine(b, w.chunks, typ, f.resp)
	}
	for _, l := range lines {
		if w.err != nil {
			return
		}
		w.out.Write(l)
		if err := w.out.WriteByte('\n'); err != nil {
			w.err = err
		}
		w.mu.Lock()
		w.frames++
		w.mu.Unlock()
	}
}

// withMessageID adds "messageId":id as the last member of the encoded
// object b (id is "msg-<n>": nothing to escape).
func withMessageID(b []byte, id string) []byte {
	if id == "" || len(b) == 0 || b[len(b)-1] != '}' {
		return b
	}
	b = append(b[:len(b)-1], `,"`+rpc.MessageIDMember+`":"`...)
	b = append(b, id...)
	return append(b, `"}`...)
}

func (w *writer) flush() {
	if w.err == nil {
		if err := w.out.Flush(); err != nil {
			w.err = err
		}
	}
}
