// Package toxic runs Toxiproxy (github.com/Shopify/toxiproxy/v2) in process:
// a TCP proxy per link whose faults ("toxics": latency, bandwidth limits,
// timeouts, reset connections) and outages are switched on and off at run
// time. The tests, the chaos campaign and cmd/faultproxy put it between the
// service and Redis, the database, the user check and the payment provider.
//
// What Toxiproxy does not do, internal/testkit/faultproxy still does: a delay whose
// bytes already held keep their delay when the delay is lifted, and a delay
// of chosen commands only (the chaos campaign's held COMMITs).
package toxic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// The toxic types of Toxiproxy v2.5.0 used here.
const (
	// Latency delays every chunk by Attributes["latency"] ms (and a
	// "jitter" ms); removing it delivers what it holds at once.
	Latency = "latency"
	// Bandwidth limits the link to Attributes["rate"] KB/s.
	Bandwidth = "bandwidth"
	// Timeout passes no data; with Attributes["timeout"] > 0 ms it closes
	// the connection after that long, with 0 never (a black hole until the
	// toxic is removed, which closes the connection).
	Timeout = "timeout"
	// ResetPeer resets the connection (RST) after Attributes["timeout"] ms.
	ResetPeer = "reset_peer"
)

// Streams: Upstream is client to server (requests), Downstream server to
// client (replies).
const (
	Upstream   = "upstream"
	Downstream = "downstream"
)

// Toxic is one fault on a proxy's link.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

var (
	serverOnce sync.Once
	server     *toxiproxy.ApiServer
	proxySeq   atomic.Int64
)

// apiServer is the in-process Toxiproxy server every proxy belongs to; its
// HTTP API is never started, and its log is discarded (its toxics log
// through zerolog's global logger, at trace level by default: a line per
// chunk).
func apiServer() *toxiproxy.ApiServer {
	serverOnce.Do(func() {
		zerolog.SetGlobalLevel(zerolog.Disabled)
		server = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	})
	return server
}

// Proxy forwards TCP connections from Addr to a target through Toxiproxy.
// Its methods are safe for concurrent use.
type Proxy struct {
	p *toxiproxy.Proxy

	mu     sync.Mutex
	down   bool
	closed bool
}

// New starts a proxy to target (host:port) listening on 127.0.0.1 at a free
// port.
func New(target string) (*Proxy, error) {
	name := fmt.Sprintf("proxy-%d", proxySeq.Add(1))
	p := toxiproxy.NewProxy(apiServer(), name, "127.0.0.1:0", target)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("toxic: start proxy to %s: %w", target, err)
	}
	return &Proxy{p: p}, nil
}

// Addr returns the host:port clients should dial. It stays the same across
// SetDown.
func (p *Proxy) Addr() string {
	p.p.Lock()
	defer p.p.Unlock()
	return p.p.Listen
}

// Target returns the host:port the proxy forwards to.
func (p *Proxy) Target() string { return p.p.Upstream }

// Add switches a toxic on. A toxic of the same name must have been removed
// first.
func (p *Proxy) Add(t Toxic) error {
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	if t.Name == "" {
		t.Name = t.Type + "_" + t.Stream
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("toxic: %w", err)
	}
	if _, err := p.p.Toxics.AddToxicJson(bytes.NewReader(raw)); err != nil {
		return fmt.Errorf("toxic: add %s: %w", t.Name, err)
	}
	return nil
}

// Remove switches the named toxic off; removing one that is not there is not
// an error.
func (p *Proxy) Remove(name string) error {
	err := p.p.Toxics.RemoveToxic(context.Background(), name)
	if err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
		return fmt.Errorf("toxic: remove %s: %w", name, err)
	}
	return nil
}

// Reset removes every toxic.
func (p *Proxy) Reset() { p.p.Toxics.ResetToxics(context.Background()) }

// SetReplyDelay delays every byte from the server to the client by d (0:
// none). Replies already held are delivered at once when the delay is
// lifted or changed.
func (p *Proxy) SetReplyDelay(d time.Duration) { p.setDelay(Downstream, d) }

// SetRequestDelay delays every byte from the client to the server by d (0:
// none): commands land after the client gave up on them; those sent before
// the client closed its connection are still delivered. Bytes already held
// are delivered at once when the delay is lifted or changed.
func (p *Proxy) SetRequestDelay(d time.Duration) { p.setDelay(Upstream, d) }

func (p *Proxy) setDelay(stream string, d time.Duration) {
	name := "delay_" + stream
	// Errors here are programming errors (a bad toxic), never the network's.
	if err := p.Remove(name); err != nil {
		panic(err)
	}
	if d <= 0 {
		return
	}
	if err := p.Add(Toxic{Name: name, Type: Latency, Stream: stream, Attributes: map[string]any{"latency": d.Milliseconds()}}); err != nil {
		panic(err)
	}
}

// SetDown, when down is true, closes every open connection and refuses new
// ones, as a dead server or a partition would; false restores service on the
// same address.
func (p *Proxy) SetDown(down bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.down == down {
		return nil
	}
	p.down = down
	if down {
		p.p.Stop()
		return nil
	}
	if err := p.p.Start(); err != nil {
		return fmt.Errorf("toxic: restart proxy on %s: %w", p.p.Listen, err)
	}
	return nil
}

// Close stops the proxy and closes every connection. Later calls do nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.p.Stop()
	return nil
}
