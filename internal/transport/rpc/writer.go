package rpcmode

import (
	"bufio"
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
	raw  []byte        // or pre-encoded JSON

	// delta merging (message_update *_delta frames only)
	block   blockKey
	isDelta bool
	first   bool // first delta of its block: goes out at once
	// merged holds the text of the deltas merged into this frame (nil
	// while it holds one delta): appending keeps merging linear.
	merged *strings.Builder
}

type blockKey struct {
	msg   int64
	index int
	typ   string
}

// writer serialises every outgoing line onto stdout from one goroutine.
//
// Slow clients: the queue is unbounded, so the agent never blocks on
// stdout. Consecutive deltas of one content block that are still queued are
// merged into one message_update (the first delta of a block goes out at
// once; later ones wait up to the delta interval so that more can join).
// Nothing is dropped or reordered, and *_end events still carry the whole
// content. With interval 0 no merging happens (one frame per chunk, as pi).
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

	// tryWrite, when set (the output is a pipe), writes a short line only
	// if the pipe takes it at once. A response handed in while nothing
	// is queued or being written is then written by the goroutine that
	// made it (direct), which saves the writer's wake-up: an answer no
	// longer waits for the scheduler to run the writer after whatever
	// the command started (a run preparing its first model request).
	tryWrite func(b []byte) (bool, error)
	dbuf     []byte // the direct line (the goroutine holding direct only)
	loopBusy bool   // the loop is writing a frame it took from the queue
	direct   bool   // a goroutine is writing its response directly

	frames  int64 // lines written (for tests and benchmarks)
	directs int64 // of which written directly (tests)
	err     error
	buf     []byte   // reused to encode events (loop goroutine only)
	free    []*frame // written frames, for reuse (at most maxFreeFrames)
}

// maxFreeFrames bounds the written frames kept for reuse.
const maxFreeFrames = 64

func newWriter(w io.Writer, interval time.Duration, errOut io.Writer) *writer {
	return newWriterOnWait(w, interval, errOut, nil)
}

// newWriterOnWait is newWriter with the writer's onWait set.
func newWriterOnWait(w io.Writer, interval time.Duration, errOut io.Writer, onWait func()) *writer {
	wr := &writer{
		onWait:    onWait,
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
	go wr.loop()
	return wr
}

// event queues an event, merging it into a queued delta when it can.
func (w *writer) event(ev rpc.Event) {
	f := frame{ev: ev} // copied to the heap only when queued (not merged)
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
						last.merged = &strings.Builder{}
						last.merged.WriteString(prev.AssistantMessageEvent.Delta)
					}
					last.merged.WriteString(ame.Delta)
					prev.Usage = e.Usage
					if e.Partial != nil {
						prev.Partial = e.Partial
					}
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
	w.queue = append(w.queue, queued)
	w.signalLocked()
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
			// writes it, ahead of what was queued meanwhile.
			w.queue = append(w.queue, nil)
			copy(w.queue[1:], w.queue)
			w.queue[0] = f
		}
		if len(w.queue) > 0 || w.closed {
			w.signalLocked()
		}
		return
	}
	w.queue = append(w.queue, f)
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
	w.mu.Unlock()
	<-w.done
}

func (w *writer) loop() {
	defer close(w.done)
	var written *frame
	for {
		w.mu.Lock()
		w.loopBusy = false
		if written != nil {
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
		if f.merged != nil {
			f.ev.(*rpc.MessageUpdateEvent).AssistantMessageEvent.Delta = f.merged.String()
		}
		b, err = rpc.AppendEvent(w.buf[:0], f.ev)
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

func (w *writer) flush() {
	if w.err == nil {
		if err := w.out.Flush(); err != nil {
			w.err = err
		}
	}
}
