package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// streamsPerConn is the users whose requests share one connection: below
// the service's 250 streams a connection, so a held user seldom waits for
// a stream (and when one does, http.ClientConn.RoundTrip waits).
const streamsPerConn = 200

// h2cConns is the crowd's client with -h2c: each user's requests are
// streams on one connection of a fixed set per instance, the user's by id,
// as a gateway's upstream carries them. net/http's Transport looked for a
// connection with a free stream among all of an instance's on every
// request, a quarter of the crowd's CPU at 100,000 users: CPU the 2-core
// box then did not have for the service it measures.
type h2cConns struct {
	tr    *http.Transport
	per   int // connections an instance
	mu    sync.Mutex
	hosts map[string][]*h2cConn
}

// h2cConn is one connection, dialled again once closed.
type h2cConn struct {
	mu sync.Mutex
	cc *http.ClientConn
}

func newH2CConns(users, instances int) *h2cConns {
	per := max((users/max(instances, 1)+streamsPerConn-1)/streamsPerConn, 1)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &h2cConns{tr: &http.Transport{Protocols: &p}, per: per, hosts: map[string][]*h2cConn{}}
}

// RoundTrip sends req on its user's connection (X-User-ID; none: the first).
func (h *h2cConns) RoundTrip(req *http.Request) (*http.Response, error) {
	uid, _ := strconv.ParseUint(req.Header.Get("X-User-ID"), 10, 64)
	cc, err := h.conn(req.URL.Host, uid).get(req.Context(), h.tr, req.URL.Host)
	if err != nil {
		return nil, err
	}
	return cc.RoundTrip(req)
}

func (h *h2cConns) conn(host string, uid uint64) *h2cConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs := h.hosts[host]
	if cs == nil {
		cs = make([]*h2cConn, h.per)
		for i := range cs {
			cs[i] = &h2cConn{}
		}
		h.hosts[host] = cs
	}
	// Fibonacci hashing: the users an instance gets (every n-th id) spread
	// over all of its connections, which uid % per would not.
	return cs[(uid*0x9E3779B97F4A7C15>>32)%uint64(len(cs))]
}

// get returns the open connection, dialling it when it has none or it
// failed (or the service sent it away).
func (c *h2cConn) get(ctx context.Context, tr *http.Transport, host string) (*http.ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cc != nil && c.cc.Err() == nil {
		return c.cc, nil
	}
	cc, err := tr.NewClientConn(ctx, "http", host)
	if err != nil {
		return nil, fmt.Errorf("h2c to %s: %w", host, err)
	}
	c.cc = cc
	return cc, nil
}
