package netfault

import (
	"net"
	"sync"
	"time"
)

// Proxy forwards every TCP connection it accepts to a target address until
// Cut is called; then it closes every open connection and refuses new ones
// (they are accepted and closed at once, which a client sees as a dropped
// connection, as when a server goes away) until Restore.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	delay time.Duration
	conns map[net.Conn]struct{}
	done  chan struct{}
}

// Listen starts a proxy on 127.0.0.1 with an ephemeral port that forwards
// to target. Close stops it.
func Listen(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port, to use in place of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut drops every open connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// SetDelay holds every chunk of bytes read from either side for d before
// it is passed on (0: none), on open connections too: a slow server or
// network rather than a dead one. A request and its answer each wait d, so
// a round trip takes 2d more; chunks keep their order and their spacing,
// so the delay adds latency without limiting throughput.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

func (p *Proxy) currentDelay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

// Close stops the proxy and drops every connection.
func (p *Proxy) Close() error {
	p.Cut()
	err := p.ln.Close()
	<-p.done
	return err
}

func (p *Proxy) accept() {
	defer close(p.done)
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// track registers conns unless the proxy is cut; ok is false when it is.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer client.Close()
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		// A cut or either side's close ends the copy; both sides then go.
		p.copyDelayed(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	go pipe(server, client)
	go pipe(client, server)
	wg.Wait()
}

// chunk is bytes read from one side, due to the other side at due.
type chunk struct {
	b   []byte
	due time.Time
}

// copyDelayed copies src to dst, each chunk held for the delay set when
// it was read: one goroutine reads (stamping each chunk), this one writes
// when it is due, so later chunks do not wait for earlier ones' delays.
func (p *Proxy) copyDelayed(dst, src net.Conn) {
	chunks := make(chan chunk, 64)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{b: buf[:n], due: time.Now().Add(p.currentDelay())}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		if wait := time.Until(c.due); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := dst.Write(c.b); err != nil {
			_ = src.Close() // the reader then ends, closing chunks
			for range chunks {
			}
			return
		}
	}
}
