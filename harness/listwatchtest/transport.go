package listwatchtest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
)

// The address a real connection to the API server would report in its errors.
var serverAddr = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 80}

// errReset is what Go's network stack returns when the peer resets the connection: apimachinery's
// net.IsConnectionReset and net.IsProbableEOF recognise it, as they do the real one.
func errReset() error {
	return &net.OpError{Op: "read", Net: "tcp", Addr: serverAddr, Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

// errRefused is what dialing a port nobody listens on returns.
func errRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: serverAddr, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// errStopped fails whatever is still waiting on the wire when a session stops.
var errStopped = errors.New("listwatch: the session stopped")

// A chunk of a response body. line is the index (within the session) of the `line` command that
// delivered it, or -1 for the body of a whole response.
type chunk struct {
	data []byte
	line int
}

// conn is one request client-go sent and what the harness answered on it.
type conn struct {
	req *http.Request
	// resp receives the answer to a pending request (headers or a transport error); buffered.
	resp chan rtResult
	// answered: headers or an error went out on resp.
	answered bool
	// over: the harness ended the response (respond, end, break, refuse) or the client cancelled it.
	// A close or a cancellation after that is no `cancel` effect.
	over bool
	body *body
	// unwatch unregisters the watch on the request's context (set once RoundTrip registered it).
	unwatch func() bool
}

type rtResult struct {
	resp *http.Response
	err  error
}

// body is a response body fed by the harness. All its fields are guarded by the session's mutex.
type body struct {
	s     *session
	c     *conn
	queue []chunk
	pos   int
	ended bool // EOF once the queue is read
	// endErr, if set, is what the read after the queue returns instead of EOF (a body cut short).
	endErr error
	broken error // returned by the next Read (the queue was dropped)
	// endRead: the client has read the end (EOF or the error).
	endRead bool
	closed  bool
	// stream: opened by `open`/`line`/`end` (a watch body), not a whole response.
	stream bool
	// wake is signalled (never blocking) whenever something changes for a reader.
	wake chan struct{}
}

// RoundTrip records the request as a `send` effect and blocks until the harness answers it, the
// request's context is done, or the session stops.
func (s *session) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	select {
	case <-s.stopped:
		s.mu.Unlock()
		return nil, errStopped
	default:
	}
	c := &conn{req: req, resp: make(chan rtResult, 1)}
	s.cur = c
	s.effect(effect{Send: &sendEffect{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery}}, "")
	s.mu.Unlock()
	// A cancellation nobody is reading for (the client walked away from a pending body) is still a
	// cancel; the readers below also record it synchronously, so it comes before whatever the
	// client does next.
	unwatch := context.AfterFunc(req.Context(), func() { s.cancelled(c) })
	s.mu.Lock()
	if c.over {
		unwatch()
	} else {
		c.unwatch = unwatch
	}
	s.mu.Unlock()
	select {
	case r := <-c.resp:
		return r.resp, r.err
	case <-req.Context().Done():
		s.cancelled(c)
		return nil, req.Context().Err()
	case <-s.stopped:
		return nil, errStopped
	}
}

// cancelled: the request's context is done.
func (s *session) cancelled(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endConn(c, true)
	if c.body != nil {
		c.body.signal()
	}
}

// endConn marks c over; a `cancel` effect when the client ended it while it was the current one.
// Called with s.mu held.
func (s *session) endConn(c *conn, byClient bool) {
	if c.over {
		return
	}
	c.over = true
	if c.unwatch != nil {
		c.unwatch()
	}
	if byClient && c == s.cur {
		s.effect(effect{Cancel: &struct{}{}}, "")
	}
}

func (b *body) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *body) Read(p []byte) (int, error) {
	s := b.s
	ctx := b.c.req.Context()
	for {
		s.mu.Lock()
		switch {
		case b.closed:
			s.mu.Unlock()
			return 0, errors.New("http: read on closed response body")
		case b.broken != nil:
			b.endRead = true
			err := b.broken
			s.mu.Unlock()
			return 0, err
		case len(b.queue) > 0:
			ch := &b.queue[0]
			n := copy(p, ch.data[b.pos:])
			b.pos += n
			if b.pos == len(ch.data) {
				if ch.line >= 0 {
					s.reads = append(s.reads, ch.line)
				}
				b.queue = b.queue[1:]
				b.pos = 0
			}
			s.mu.Unlock()
			return n, nil
		case b.ended:
			b.endRead = true
			err := b.endErr
			s.mu.Unlock()
			if err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		s.mu.Unlock()
		select {
		case <-b.wake:
		case <-ctx.Done():
			s.cancelled(b.c)
			return 0, ctx.Err()
		case <-s.stopped:
			return 0, errStopped
		}
	}
}

// Close before the harness ended the response is a `cancel`.
func (b *body) Close() error {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.queue = nil
		s.endConn(b.c, true)
	}
	b.signal()
	return nil
}

// unread counts the `line` chunks of b not read yet.
func (b *body) unread() int {
	if b.closed {
		return 0
	}
	n := 0
	for _, ch := range b.queue {
		if ch.line >= 0 {
			n++
		}
	}
	return n
}

// pending is the current request if it still waits for its headers.
func (s *session) pending() *conn {
	if c := s.cur; c != nil && !c.over && !c.answered {
		return c
	}
	return nil
}

// streaming is the current request's body if it is open.
func (s *session) streaming() *body {
	if c := s.cur; c != nil && !c.over && c.body != nil && !c.body.closed {
		return c.body
	}
	return nil
}

func (s *session) newResponse(c *conn, status int, header http.Header, b *body, length int64) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          b,
		ContentLength: length,
		Request:       c.req,
	}
}

func (s *session) newBody(c *conn) *body {
	b := &body{s: s, c: c, wake: make(chan struct{}, 1)}
	c.body = b
	return b
}

// respond answers the pending request with a whole response. Called with s.mu held.
func (s *session) respond(status int, text string, retryAfter *uint64) {
	c := s.pending()
	if c == nil {
		return
	}
	h := http.Header{"Content-Type": []string{"application/json"}}
	if retryAfter != nil {
		h.Set("Retry-After", strconv.FormatUint(*retryAfter, 10))
	}
	b := s.newBody(c)
	if text != "" {
		b.queue = append(b.queue, chunk{data: []byte(text), line: -1})
	}
	b.ended = true
	c.answered = true
	c.resp <- rtResult{resp: s.newResponse(c, status, h, b, int64(len(text)))}
	s.endConn(c, false)
}

// cut answers the pending request with headers promising length bytes and the first of them, text;
// then the connection breaks: the read after them fails with io.ErrUnexpectedEOF, as net/http's
// reads of a body shorter than its Content-Length do. Called with s.mu held.
func (s *session) cut(status int, text string, length int64) {
	c := s.pending()
	if c == nil {
		return
	}
	h := http.Header{"Content-Type": []string{"application/json"}}
	b := s.newBody(c)
	b.queue = append(b.queue, chunk{data: []byte(text), line: -1})
	b.ended = true
	b.endErr = io.ErrUnexpectedEOF
	c.answered = true
	c.resp <- rtResult{resp: s.newResponse(c, status, h, b, length)}
	s.endConn(c, false)
}

// open answers the pending request with 200 headers and a body that stays open. Called with s.mu held.
func (s *session) open() {
	c := s.pending()
	if c == nil {
		return
	}
	h := http.Header{"Content-Type": []string{"application/json"}, "Transfer-Encoding": []string{"chunked"}}
	b := s.newBody(c)
	b.stream = true
	c.answered = true
	c.resp <- rtResult{resp: s.newResponse(c, http.StatusOK, h, b, -1)}
}

// line appends one line to the open body (opening it first if the request is pending).
func (s *session) line(data string) {
	s.open()
	idx := s.lines
	s.lines++
	if b := s.streaming(); b != nil {
		b.queue = append(b.queue, chunk{data: []byte(data), line: idx})
		b.signal()
	}
}

// end: the server ends the body cleanly (a pending request gets a 200 with an empty body).
func (s *session) end() {
	s.open()
	if b := s.streaming(); b != nil {
		b.ended = true
		b.signal()
		s.endConn(b.c, false)
	}
}

// fail ends the current connection with a transport error: a pending request fails with it, an
// open body loses what it had queued and returns it on the next Read.
func (s *session) fail(err error) {
	if c := s.pending(); c != nil {
		c.answered = true
		c.resp <- rtResult{err: err}
		s.endConn(c, false)
		return
	}
	if b := s.streaming(); b != nil {
		b.queue = nil
		b.pos = 0
		b.broken = err
		b.signal()
		s.endConn(b.c, false)
	}
}

// CancelRequest is the pre-context way to cancel: http.Client still calls it on a timeout, through
// client-go's wrappers, which log a warning when the transport lacks it. The request's context
// ends at the same moment, and that is what this transport acts on.
func (s *session) CancelRequest(*http.Request) {}
