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
