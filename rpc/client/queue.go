package client

import "sync"

// eventQueue holds events between the reader and the Events channel. push
// never blocks: beyond limit (if > 0) the oldest event is dropped.
type eventQueue struct {
	mu      sync.Mutex
	buf     []Event
	head    int
	limit   int
	dropped uint64
	closed  bool
	notify  chan struct{} // capacity 1: "something changed"
}

func newEventQueue(limit int) *eventQueue {
	return &eventQueue{limit: limit, notify: make(chan struct{}, 1)}
}

func (q *eventQueue) signal() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	if q.limit > 0 && len(q.buf)-q.head >= q.limit {
		q.buf[q.head] = Event{}
		q.head++
		q.dropped++
	}
	q.buf = append(q.buf, ev)
	q.compact()
	q.mu.Unlock()
	q.signal()
}

// compact releases the consumed front of buf (q.mu held).
func (q *eventQueue) compact() {
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.buf) {
		q.buf = append([]Event(nil), q.buf[q.head:]...)
		q.head = 0
	}
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// pop returns the oldest event, waiting for one; ok is false once the queue
// is closed and empty, or when stop is closed.
func (q *eventQueue) pop(stop <-chan struct{}) (Event, bool) {
	for {
		q.mu.Lock()
		if q.head < len(q.buf) {
			ev := q.buf[q.head]
			q.buf[q.head] = Event{}
			q.head++
			q.compact()
			q.mu.Unlock()
			return ev, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return Event{}, false
		}
		select {
		case <-q.notify:
		case <-stop:
			return Event{}, false
		}
	}
}

func (q *eventQueue) droppedCount() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}

// subscriber collects every event from the moment it is registered, without
// limit (PromptAndWait).
type subscriber struct {
	mu     sync.Mutex
	events []Event
	closed bool
	notify chan struct{}
}

func newSubscriber() *subscriber { return &subscriber{notify: make(chan struct{}, 1)} }

func (s *subscriber) add(ev Event) {
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *subscriber) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// since returns the events from index i on and whether the connection ended.
func (s *subscriber) since(i int) ([]Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events[i:]...), s.closed
}

func (c *Client) subscribe() *subscriber {
	s := newSubscriber()
	c.mu.Lock()
	if c.subs == nil {
		s.closed = true
	} else {
		c.subs[s] = struct{}{}
	}
	c.mu.Unlock()
	return s
}

func (c *Client) unsubscribe(s *subscriber) {
	c.mu.Lock()
	if c.subs != nil {
		delete(c.subs, s)
	}
	c.mu.Unlock()
}
