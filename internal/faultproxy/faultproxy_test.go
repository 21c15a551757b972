package faultproxy_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seckill-oss/seckill/internal/faultproxy"
)

// echoServer answers every line with the same line, and records when each
// line arrived, so tests can see that commands land before replies return.
func echoServer(t *testing.T) (addr string, arrived <-chan time.Time) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan time.Time, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					ch <- time.Now()
					if _, err := c.Write(line); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), ch
}

func roundTrip(t *testing.T, c net.Conn, msg string) (string, error) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return line, err
}

func TestProxy(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last, after the echo server stops
	target, arrived := echoServer(t)
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
	if got, err := roundTrip(t, c, "hello"); err != nil || got != "hello\n" {
		t.Fatalf("plain round trip: %q, %v", got, err)
	}
	<-arrived

	t.Run("delay holds replies but not requests", func(t *testing.T) {
		const delay = 300 * time.Millisecond
		p.SetDelay(delay)
		defer p.SetDelay(0)
		sent := time.Now()
		got, err := roundTrip(t, c, "slow")
		took := time.Since(sent)
		if err != nil || got != "slow\n" {
			t.Fatalf("delayed round trip: %q, %v", got, err)
		}
		if landed := (<-arrived).Sub(sent); landed > delay/2 {
			t.Errorf("request reached the server after %v; want it at once", landed)
		}
		if took < delay {
			t.Errorf("reply came back after %v; want at least %v", took, delay)
		}
	})

	t.Run("request delay holds requests, delivered after the client left", func(t *testing.T) {
		const delay = 300 * time.Millisecond
		before := p.Conns()
		p.SetRequestDelay(delay)
		defer p.SetRequestDelay(0)
		late, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		if _, err := io.WriteString(late, "late\n"); err != nil {
			t.Fatal(err)
		}
		_ = late.Close() // the client gives up before the command lands
		select {
		case at := <-arrived:
			if landed := at.Sub(sent); landed < delay {
				t.Errorf("request reached the server after %v; want at least %v", landed, delay)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a request sent before the client closed never reached the server")
		}
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

	t.Run("down cuts open connections and refuses new ones", func(t *testing.T) {
		p.SetDown(true)
		if _, err := roundTrip(t, c, "gone"); err == nil {
			t.Fatal("round trip through a downed proxy succeeded")
		}
		c2, err := net.Dial("tcp", p.Addr())
		if err == nil {
			_, err = roundTrip(t, c2, "refused")
			c2.Close()
		}
		if err == nil {
			t.Fatal("new connection through a downed proxy worked")
		}
		p.SetDown(false)
		c3, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c3.Close()
		if got, err := roundTrip(t, c3, "back"); err != nil || got != "back\n" {
			t.Fatalf("after SetDown(false): %q, %v", got, err)
		}
	})

	t.Run("close ends every goroutine", func(t *testing.T) {
		c4, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c4.Close()
		p.SetDelay(time.Hour) // a writer waiting on a due time must still stop
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
