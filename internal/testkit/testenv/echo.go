package testenv

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// EchoServer answers every line with the same line and records when each
// arrived, so a proxy's test sees a command land before its reply returns.
// It stops when the test ends.
func EchoServer(t *testing.T) (addr string, arrived <-chan time.Time) {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
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

// EchoRoundTrip sends msg as a line on c and returns the line that comes
// back, within 5 s.
func EchoRoundTrip(c net.Conn, msg string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

// CheckEcho checks one plain round trip on c, a connection through a proxy
// to EchoServer, and takes its arrival off arrived.
func CheckEcho(t *testing.T, c net.Conn, arrived <-chan time.Time) {
	t.Helper()
	if got, err := EchoRoundTrip(c, "hello"); err != nil || got != "hello\n" {
		t.Fatalf("plain round trip: %q, %v", got, err)
	}
	<-arrived
}

// CheckReplyDelay checks that a proxy told to hold replies (by setDelay,
// its SetReplyDelay) holds the reply to a line sent on c but not the line
// itself, which EchoServer records on arrived. The delay is lifted after.
func CheckReplyDelay(t *testing.T, setDelay func(time.Duration), c net.Conn, arrived <-chan time.Time) {
	t.Helper()
	const delay = 300 * time.Millisecond
	setDelay(delay)
	defer setDelay(0)
	sent := time.Now()
	got, err := EchoRoundTrip(c, "slow")
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
}

// CheckLateRequest sends a line through the proxy at addr, which holds
// requests for delay, and closes the connection at once: the line must
// still reach EchoServer, no sooner than delay after it was sent.
func CheckLateRequest(t *testing.T, addr string, delay time.Duration, arrived <-chan time.Time) {
	t.Helper()
	late, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", addr)
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
}
