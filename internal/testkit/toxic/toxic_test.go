package toxic_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

func dial(t *testing.T, p *toxic.Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestProxy(t *testing.T) {
	target, arrived := testenv.EchoServer(t)
	p, err := toxic.New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dial(t, p)
	testenv.CheckEcho(t, c, arrived)

	t.Run("reply delay holds replies but not requests", func(t *testing.T) {
		testenv.CheckReplyDelay(t, p.SetReplyDelay, c, arrived)
	})

	t.Run("request delay holds requests, delivered after the client left", func(t *testing.T) {
		const delay = 300 * time.Millisecond
		p.SetRequestDelay(delay)
		defer p.SetRequestDelay(0)
		testenv.CheckLateRequest(t, p.Addr(), delay, arrived)
	})

	t.Run("timeout toxic passes nothing until removed", func(t *testing.T) {
		if err := p.Add(toxic.Toxic{Name: "hole", Type: toxic.Timeout, Stream: toxic.Upstream, Attributes: map[string]any{"timeout": 0}}); err != nil {
			t.Fatal(err)
		}
		held := dial(t, p)
		_ = held.SetDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := io.WriteString(held, "lost\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(held).ReadString('\n'); err == nil {
			t.Fatal("an answer came through a timeout toxic")
		}
		if err := p.Remove("hole"); err != nil {
			t.Fatal(err)
		}
		if got, err := testenv.EchoRoundTrip(dial(t, p), "through"); err != nil || got != "through\n" {
			t.Fatalf("after the toxic was removed: %q, %v", got, err)
		}
		<-arrived
	})

	t.Run("down cuts open connections and refuses new ones, up serves on the same address", func(t *testing.T) {
		addr := p.Addr()
		if err := p.SetDown(true); err != nil {
			t.Fatal(err)
		}
		if _, err := testenv.EchoRoundTrip(c, "gone"); err == nil {
			t.Fatal("round trip through a downed proxy succeeded")
		}
		if c2, err := net.Dial("tcp", addr); err == nil {
			_ = c2.Close()
			t.Fatal("a downed proxy accepted a connection")
		}
		if err := p.SetDown(false); err != nil {
			t.Fatal(err)
		}
		if p.Addr() != addr {
			t.Errorf("address %s after SetDown(false), want %s", p.Addr(), addr)
		}
		if got, err := testenv.EchoRoundTrip(dial(t, p), "back"); err != nil || got != "back\n" {
			t.Fatalf("after SetDown(false): %q, %v", got, err)
		}
	})
}
