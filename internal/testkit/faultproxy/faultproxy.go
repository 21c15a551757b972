// Package faultproxy is a TCP proxy that delays commands or replies the way
// Toxiproxy cannot: bytes it already holds keep the delay they were read
// with when the delay is lifted or changed, and Conns tells when every held
// command has been delivered. Toxiproxy's latency toxic (internal/testkit/toxic,
// which the other fault tests use) delivers what it holds at once when the
// toxic is removed, and does not expose its connections: a test of a
// command landing after the lookup that followed its timeout (the lookup
// must get through while the command is still held) needs this proxy.
//
// The reply delay (SetDelay, also SetReplyDelay) holds server-to-client bytes:
// commands reach the server at once and take effect, while their replies
// arrive after the client's read timeout, the "timed out but succeeded" case
// that stranded a user's lock for two hours (docs/SEEDS.md). The request delay
// (SetRequestDelay) holds client-to-server bytes: a command lands after the
// client has given up on it, as a TCP retransmit or a resent command does.
// Bytes a client sent before it closed its connection are still delivered at
// their due time, then the proxy half-closes the server side, so a late
// command lands even though nobody waits for its reply.
package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP connections from Addr to a target, with faults
// switched on and off at run time. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	replyDelay   atomic.Int64 // a time.Duration
	requestDelay atomic.Int64 // a time.Duration
	held         atomic.Int64 // requests held so far
	holding      atomic.Int64 // chunks held and not yet delivered or dropped

	mu       sync.Mutex
	newMatch func() func([]byte) bool
	closed   bool
	conns    map[*link]struct{}
}

// link is one proxied connection.
type link struct {
	client, server net.Conn
	done           chan struct{} // closed by shut
	once           sync.Once
	match          func([]byte) bool // from SetRequestMatch; nil holds every chunk
}

func (k *link) shut() {
	k.once.Do(func() {
		close(k.done)
		_ = k.client.Close()
		_ = k.server.Close()
	})
}

// New starts a proxy to target (host:port) listening on 127.0.0.1 at a free
// port.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{target: target, ln: ln, conns: make(map[*link]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the host:port clients should dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetReplyDelay delays every byte sent from the server to the client by d,
// from the moment the proxy reads it; 0 restores normal service. Bytes
// already waiting keep the delay they were read with.
func (p *Proxy) SetReplyDelay(d time.Duration) { p.replyDelay.Store(int64(d)) }

// ReplyDelay returns the delay set by SetReplyDelay (or SetDelay).
func (p *Proxy) ReplyDelay() time.Duration { return time.Duration(p.replyDelay.Load()) }

// SetRequestDelay delays every byte sent from the client to the server by d,
// from the moment the proxy reads it; 0 restores normal service. Bytes
// already waiting keep the delay they were read with, and are delivered even
// if the client closes its connection meanwhile.
func (p *Proxy) SetRequestDelay(d time.Duration) { p.requestDelay.Store(int64(d)) }

// RequestDelay returns the delay set by SetRequestDelay.
func (p *Proxy) RequestDelay() time.Duration { return time.Duration(p.requestDelay.Load()) }

// SetRequestMatch makes the request delay hold only the chunks (one read
// from the client each, a whole command for a client that waits for each
// reply) that a match says to; nil holds every chunk. newMatch gives each
// connection accepted afterwards its own match, which sees every chunk the
// client sends on it, held or not, in order: it can follow the connection's
// state (the statements of a transaction before its COMMIT). A chunk that is
// not held still waits behind those held before it on its connection.
// Toxiproxy cannot choose what it delays: this is how a fault hits one
// command, such as a COMMIT, and nothing around it.
func (p *Proxy) SetRequestMatch(newMatch func() func([]byte) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.newMatch = newMatch
}

// requestDelayOf is the delay for a chunk read from k's client now.
func (p *Proxy) requestDelayOf(k *link, b []byte) time.Duration {
	matched := k.match == nil || k.match(b) // always: the match follows the connection
	d := p.RequestDelay()
	if d == 0 || !matched {
		return 0
	}
	p.held.Add(1)
	return d
}

// Holding returns how many chunks, either way, the proxy holds now: 0 when
// every delayed command and reply has been delivered (or dropped with its
// connection).
func (p *Proxy) Holding() int64 { return p.holding.Load() }

// Held returns how many requests (chunks) a request delay has held so far.
func (p *Proxy) Held() int64 { return p.held.Load() }

// replyDelayOf is the delay for a chunk read from the server now.
func (p *Proxy) replyDelayOf([]byte) time.Duration { return p.ReplyDelay() }

// Conns returns the number of proxied connections still open. A connection
// whose client has gone stays open until its delayed requests are delivered
// and the server has closed its end: Conns falling to 0 after the client
// closed tells a test that every late command has landed.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops the proxy, closes every connection and waits for its
// goroutines to end. Later calls do nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	open := make([]*link, 0, len(p.conns))
	for k := range p.conns {
		open = append(open, k)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	for _, k := range open {
		k.shut()
	}
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				time.Sleep(10 * time.Millisecond) // e.g. EMFILE: retry rather than spin
				continue
			}
			return
		}
		p.mu.Lock()
		refuse := p.closed
		p.mu.Unlock()
		if refuse {
			_ = client.Close()
			continue
		}
		server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			_ = client.Close()
			continue
		}
		k := &link{client: client, server: server, done: make(chan struct{})}
		p.mu.Lock()
		if p.newMatch != nil {
			k.match = p.newMatch()
		}
		p.mu.Unlock()
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			k.shut()
			continue
		}
		p.conns[k] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(k)
	}
}

// serve runs both directions of one connection and forgets it when both
// have ended.
func (p *Proxy) serve(k *link) {
	defer p.wg.Done()
	var both sync.WaitGroup
	both.Add(2)
	go func() {
		defer both.Done()
		// The client is gone: deliver what it sent, then tell the server
		// there is no more, so it closes its end and the replies side ends.
		p.pipe(k, k.client, k.server, func(b []byte) time.Duration { return p.requestDelayOf(k, b) }, func() { closeWrite(k.server) })
	}()
	go func() {
		defer both.Done()
		p.pipe(k, k.server, k.client, p.replyDelayOf, k.shut)
	}()
	both.Wait()
	k.shut()
	p.mu.Lock()
	delete(p.conns, k)
	p.mu.Unlock()
}

// chunk is a piece of a byte stream and the time it may be passed on.
type chunk struct {
	data    []byte
	due     time.Time
	delayed bool // counted in holding
}

// pipe copies src to dst, holding each chunk for the delay in force when it
// was read. When src ends, it delivers what it holds (unless the link is
// shut meanwhile) and then calls ended. A failed write to dst drops the rest.
func (p *Proxy) pipe(k *link, src, dst net.Conn, delay func([]byte) time.Duration, ended func()) {
	held := make(chan chunk, 256)
	written := make(chan struct{})
	go func() {
		defer close(written)
		timer := time.NewTimer(0)
		defer timer.Stop()
		failed := false
		for c := range held {
			p.deliver(k, c, dst, timer, &failed)
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			data := bytes.Clone(buf[:n])
			d := delay(data)
			c := chunk{data: data, due: time.Now().Add(d), delayed: d > 0}
			if c.delayed {
				p.holding.Add(1)
			}
			select {
			case held <- c:
			case <-k.done:
				if c.delayed {
					p.holding.Add(-1)
				}
			}
		}
		if err != nil {
			break
		}
	}
	close(held)
	<-written
	ended()
}

// deliver writes c to dst at its due time, unless the link failed or is shut
// first.
func (p *Proxy) deliver(k *link, c chunk, dst net.Conn, timer *time.Timer, failed *bool) {
	if c.delayed {
		defer p.holding.Add(-1)
	}
	if *failed {
		return // drain so the reader never blocks
	}
	if wait := time.Until(c.due); wait > 0 {
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-k.done:
			*failed = true
			return
		}
	}
	if _, err := dst.Write(c.data); err != nil {
		*failed = true
	}
}

// closeWrite half-closes c where it can, and closes it otherwise.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		return
	}
	_ = c.Close()
}
