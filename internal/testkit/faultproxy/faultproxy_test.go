package faultproxy_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seckill-oss/seckill/internal/testkit/faultproxy"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func TestProxy(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last, after the echo server stops
	target, arrived := testenv.EchoServer(t)
	p, err := faultproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testenv.CheckEcho(t, c, arrived)

	t.Run("delay holds replies but not requests", func(t *testing.T) {
		testenv.CheckReplyDelay(t, p.SetReplyDelay, c, arrived)
	})

	t.Run("request delay holds requests, delivered after the client left", func(t *testing.T) {
		const delay = 300 * time.Millisecond
		before := p.Conns()
		p.SetRequestDelay(delay)
		defer p.SetRequestDelay(0)
		testenv.CheckLateRequest(t, p.Addr(), delay, arrived)
		for deadline := time.Now().Add(10 * time.Second); p.Conns() > before; {
			if time.Now().After(deadline) {
				t.Fatalf("Conns = %d after the late request landed, want %d", p.Conns(), before)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if p.RequestDelay() != delay || p.ReplyDelay() != 0 {
			t.Errorf("RequestDelay %v, ReplyDelay %v; want %v and 0", p.RequestDelay(), p.ReplyDelay(), delay)
		}
	})

	t.Run("a lifted delay keeps the delay of what it holds", func(t *testing.T) {
		const delay = 400 * time.Millisecond
		p.SetRequestDelay(delay)
		held, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		sent := time.Now()
		if _, err := io.WriteString(held, "held\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the proxy has read it
		if n := p.Holding(); n != 1 {
			t.Errorf("Holding() = %d while one request is held, want 1", n)
		}
		p.SetRequestDelay(0)
		// A request sent now passes the held one: Toxiproxy would deliver
		// the held one first, at the moment the delay is lifted.
		if got, err := testenv.EchoRoundTrip(c, "now"); err != nil || got != "now\n" {
			t.Fatalf("round trip after the lift: %q, %v", got, err)
		}
		if landed := (<-arrived).Sub(sent); landed >= delay {
			t.Errorf("the request sent after the lift landed %v after the held one was sent; want before it", landed)
		}
		if landed := (<-arrived).Sub(sent); landed < delay {
			t.Errorf("the held request landed after %v; want its own %v", landed, delay)
		}
		// The count drops once the proxy's write returns, just after the
		// server has read it.
		for deadline := time.Now().Add(5 * time.Second); p.Holding() != 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("Holding() = %d after the held request landed, want 0", p.Holding())
			}
		}
	})

	t.Run("a request match holds only what it matches", func(t *testing.T) {
		const delay = 400 * time.Millisecond
		// A match per connection that follows it: only a commit after an
		// update is held.
		p.SetRequestMatch(func() func([]byte) bool {
			updated := false
			return func(b []byte) bool {
				switch {
				case strings.HasPrefix(string(b), "update"):
					updated = true
				case strings.HasPrefix(string(b), "commit"):
					held := updated
					updated = false
					return held
				}
				return false
			}
		})
		c, err := net.Dial("tcp", p.Addr()) // accepted after the match was set
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		p.SetRequestDelay(delay)
		defer func() { p.SetRequestDelay(0); p.SetRequestMatch(nil) }()
		sent := time.Now()
		if got, err := testenv.EchoRoundTrip(c, "insert"); err != nil || got != "insert\n" {
			t.Fatalf("unmatched round trip: %q, %v", got, err)
		}
		if landed := (<-arrived).Sub(sent); landed >= delay/2 {
			t.Errorf("an unmatched request landed after %v; want at once", landed)
		}
		sent = time.Now()
		if got, err := testenv.EchoRoundTrip(c, "commit"); err != nil || got != "commit\n" {
			t.Fatalf("round trip of a commit after no update: %q, %v", got, err)
		}
		if landed := (<-arrived).Sub(sent); landed >= delay/2 {
			t.Errorf("a commit after no update landed after %v; want at once", landed)
		}
		if _, err := testenv.EchoRoundTrip(c, "update"); err != nil {
			t.Fatal(err)
		}
		<-arrived
		sent = time.Now()
		if got, err := testenv.EchoRoundTrip(c, "commit"); err != nil || got != "commit\n" {
			t.Fatalf("matched round trip: %q, %v", got, err)
		}
		if landed := (<-arrived).Sub(sent); landed < delay {
			t.Errorf("a matched request landed after %v; want at least %v", landed, delay)
		}
		if p.Held() == 0 {
			t.Error("Held() = 0 after a request was held")
		}
	})

	t.Run("close ends every goroutine", func(t *testing.T) {
		c4, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c4.Close()
		p.SetReplyDelay(time.Hour) // a writer waiting on a due time must still stop
		if _, err := io.WriteString(c4, "stuck\n"); err != nil {
			t.Fatal(err)
		}
		p.SetRequestDelay(time.Hour) // and so must one holding a request
		if _, err := io.WriteString(c4, "held\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
			t.Fatal("closed proxy still accepts")
		}
	})
}
