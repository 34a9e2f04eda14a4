package builtin

import (
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentree/agentree/agentsdk/event"
)

// capture keeps a command's output for the model within a fixed amount of
// memory: all of it up to limit bytes; past that its first and last
// limit/2 bytes and a count of what was dropped between them. A command
// printing gigabytes costs the worker limit bytes, not gigabytes.
//
// What it drops is not lost: past the limit the whole output goes on in a
// spill file of the workspace (up to the spill limit), which the note
// names, so the model can grep or read it.
type capture struct {
	mu    sync.Mutex
	half  int
	head  []byte
	tail  []byte // a ring of the last half bytes once full
	pos   int    // where the ring's oldest byte is, once full
	total int64
	spill *spill
}

// spill is where the whole of an output past the limit is kept.
type spill struct {
	// name is the file's path in the workspace; open creates it.
	name string
	// limit bounds the file, against a command that prints until its
	// timeout filling the worker's disk.
	limit   int64
	open    func() (io.WriteCloser, error)
	f       io.WriteCloser
	written int64
	err     error
}

func (s *spill) write(p []byte) {
	if s.err != nil {
		return
	}
	if s.f == nil {
		if s.f, s.err = s.open(); s.err != nil {
			return
		}
	}
	p = p[:min(int64(len(p)), s.limit-s.written)]
	n, err := s.f.Write(p)
	s.written += int64(n)
	s.err = err
}

func (s *spill) close() {
	if s.f != nil {
		if err := s.f.Close(); s.err == nil {
			s.err = err
		}
	}
}

func newCapture(limit int, sp *spill) *capture {
	half := max(limit/2, 1)
	return &capture{half: half, head: make([]byte, 0, min(half, 64<<10)), spill: sp}
}

func (c *capture) Write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spill != nil && c.total+int64(len(p)) > int64(2*c.half) {
		if c.total <= int64(2*c.half) {
			// The first write past the limit: head and ring still hold
			// everything so far, in order.
			c.spill.write(c.head)
			c.spill.write(c.tail)
		}
		c.spill.write(p)
	}
	c.total += int64(len(p))
	if room := c.half - len(c.head); room > 0 {
		n := min(room, len(p))
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	if room := c.half - len(c.tail); room > 0 {
		n := min(room, len(p))
		c.tail = append(c.tail, p[:n]...)
		p = p[n:]
	}
	if len(p) >= c.half {
		copy(c.tail, p[len(p)-c.half:])
		c.pos = 0
		return
	}
	for len(p) > 0 {
		n := copy(c.tail[c.pos:], p)
		p = p[n:]
		c.pos = (c.pos + n) % c.half
	}
}

// String is the output kept, with a note where bytes were dropped.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte(nil), c.tail[c.pos:]...), c.tail[:c.pos]...)
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return string(c.head) + string(tail)
	}
	// The cuts may split a character; drop its pieces rather than show
	// broken bytes.
	head := c.head
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.FullRune(head[lastRuneStart(head):]); i++ {
		head = head[:lastRuneStart(head)]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	dropped := c.total - int64(len(head)+len(tail))
	return fmt.Sprintf("%s\n[… %d bytes of %d dropped here: past this worker's bash output limit of %d bytes; %s …]\n%s",
		head, dropped, c.total, 2*c.half, c.spilled(), tail)
}

// spilled says where the whole output is, or why it is not.
func (c *capture) spilled() string {
	switch s := c.spill; {
	case s == nil:
		return "not kept"
	case s.err != nil:
		return fmt.Sprintf("could not keep the whole output in %s: %v", s.name, s.err)
	case s.written < c.total:
		return fmt.Sprintf("the first %d bytes are in %s in the workspace", s.written, s.name)
	default:
		return fmt.Sprintf("the whole output is in %s in the workspace", s.name)
	}
}

// close closes the spill file, if any.
func (c *capture) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spill != nil {
		c.spill.close()
	}
}

// Total is how many bytes the command wrote.
func (c *capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) && len(b)-i < utf8.UTFMax {
		i--
	}
	return i
}

// Terminal streaming: output is batched, per stream, into chunks of at
// most streamChunk bytes sent at least every streamEvery, so a command
// printing a line at a time does not become one event (one database row)
// per line, and a quiet command's last line still shows promptly.
const (
	streamChunk = 16 << 10
	streamEvery = 50 * time.Millisecond
)

// streamer sends a command's output to the execution's stream as
// terminal data events.
type streamer struct {
	mu      sync.Mutex
	emit    func(any)
	pending map[string][]byte
	stop    chan struct{}
	done    chan struct{}
}

func newStreamer(emit func(any)) *streamer {
	s := &streamer{emit: emit, pending: map[string][]byte{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.tick()
	return s
}

func (s *streamer) tick() {
	defer close(s.done)
	t := time.NewTicker(streamEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			s.flush("stdout", false)
			s.flush("stderr", false)
			s.mu.Unlock()
		}
	}
}

func (s *streamer) write(stream string, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[stream] = append(s.pending[stream], p...)
	if len(s.pending[stream]) >= streamChunk {
		s.flush(stream, false)
	}
}

// flush sends what is pending on stream, in chunks, holding back a
// character split across reads unless final.
func (s *streamer) flush(stream string, final bool) {
	b := s.pending[stream]
	n := len(b)
	if !final && n > 0 {
		if i := lastRuneStart(b); !utf8.FullRune(b[i:]) {
			n = i
		}
	}
	for sent := 0; sent < n; {
		end := min(sent+streamChunk, n)
		for end < n && end > sent+1 && !utf8.RuneStart(b[end]) {
			end--
		}
		if s.emit != nil {
			s.emit(event.Payload{Type: event.TypeTerminal, Stream: stream, Output: string(b[sent:end])})
		}
		sent = end
	}
	s.pending[stream] = append(b[:0], b[n:]...)
}

// close sends everything still pending and stops the ticker.
func (s *streamer) close() {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush("stdout", true)
	s.flush("stderr", true)
}

// sink is one stream of a command: its bytes go to the capture and the
// streamer.
type sink struct {
	name string
	c    *capture
	s    *streamer
}

func (k sink) Write(p []byte) (int, error) {
	k.c.Write(p)
	k.s.write(k.name, p)
	return len(p), nil
}
