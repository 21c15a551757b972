// Package faultproxy is a TCP proxy that injects the network faults a Redis
// client must survive: replies that arrive late, and a server that goes away.
//
// Delay applies to server-to-client bytes only. Commands reach the server at
// once and take effect, while their replies arrive after the client's read
// timeout: the "timed out but succeeded" case that stranded a user's lock
// for two hours (shared/SEEDS.md). Tests and the load-test runner use it.
package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from Addr to a target, with faults
// switched on and off at run time. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu     sync.Mutex
	delay  time.Duration
	down   bool
	closed bool
	conns  map[*link]struct{}
}

// link is one proxied connection.
type link struct {
	client, server net.Conn
	done           chan struct{} // closed by shut
	once           sync.Once
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

// SetDelay delays every byte sent from the server to the client by d, from
// the moment the proxy reads it; 0 restores normal service. Bytes already
// waiting keep the delay they were read with.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Delay returns the delay set by SetDelay.
func (p *Proxy) Delay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

// Down reports whether the proxy is down (SetDown).
func (p *Proxy) Down() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

// SetDown, when down is true, closes every open connection and closes new
// ones as soon as they are accepted, as a dead server or a partition would;
// false restores service.
func (p *Proxy) SetDown(down bool) {
	p.mu.Lock()
	p.down = down
	var open []*link
	if down {
		for k := range p.conns {
			open = append(open, k)
		}
	}
	p.mu.Unlock()
	for _, k := range open {
		k.shut()
	}
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
		refuse := p.down || p.closed
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
		if p.down || p.closed {
			p.mu.Unlock()
			k.shut()
			continue
		}
		p.conns[k] = struct{}{}
		p.wg.Add(3)
		p.mu.Unlock()
		go p.forward(k)
		go p.readReplies(k, p.replies(k))
	}
}

// forward copies client-to-server bytes without delay.
func (p *Proxy) forward(k *link) {
	defer p.wg.Done()
	_, _ = io.Copy(k.server, k.client)
	k.shut()
	p.mu.Lock()
	delete(p.conns, k)
	p.mu.Unlock()
}

// chunk is a piece of a server reply and the time it may be passed on.
type chunk struct {
	data []byte
	due  time.Time
}

// replies starts the goroutine that writes delayed server bytes to the
// client and returns the channel that feeds it; closing the channel stops it.
func (p *Proxy) replies(k *link) chan<- chunk {
	ch := make(chan chunk, 256)
	go func() {
		defer p.wg.Done()
		timer := time.NewTimer(0)
		defer timer.Stop()
		for c := range ch {
			if wait := time.Until(c.due); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-k.done:
					continue // drain so readReplies never blocks
				}
			}
			if _, err := k.client.Write(c.data); err != nil {
				k.shut()
			}
		}
	}()
	return ch
}

// readReplies reads server bytes and stamps each chunk with its due time.
func (p *Proxy) readReplies(k *link, out chan<- chunk) {
	defer p.wg.Done()
	defer close(out)
	buf := make([]byte, 32<<10)
	for {
		n, err := k.server.Read(buf)
		if n > 0 {
			p.mu.Lock()
			due := time.Now().Add(p.delay)
			p.mu.Unlock()
			select {
			case out <- chunk{data: bytes.Clone(buf[:n]), due: due}:
			case <-k.done:
				return
			}
		}
		if err != nil {
			k.shut()
			return
		}
	}
}
