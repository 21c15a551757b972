package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/toxic"
)

// echoServer answers every line with itself, like a tiny Redis.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func put(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func roundTrip(t *testing.T, conn net.Conn, r *bufio.Reader) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	if _, err := conn.Write([]byte("PING\n")); err != nil {
		return 0, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := r.ReadString('\n')
	return time.Since(start), err
}

// controlledProxy is a proxy to an echo server and its control endpoint,
// both closed when the test ends.
func controlledProxy(t *testing.T) (*toxic.Proxy, *httptest.Server) {
	t.Helper()
	p, err := toxic.New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ctl := httptest.NewServer(newController(p, "echo", slog.New(slog.DiscardHandler)))
	t.Cleanup(ctl.Close)
	return p, ctl
}

func TestControlDelayAndDown(t *testing.T) {
	p, ctl := controlledProxy(t)

	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if d, err := roundTrip(t, conn, r); err != nil || d > 100*time.Millisecond {
		t.Fatalf("before any fault: round trip %v, %v; want fast", d, err)
	}

	if code, body := put(t, ctl.URL+"/delay?d=200ms"); code != http.StatusOK || body["delay"] != "200ms" {
		t.Fatalf("PUT /delay: %d %v", code, body)
	}
	if d, err := roundTrip(t, conn, r); err != nil || d < 200*time.Millisecond {
		t.Fatalf("with delay 200ms: round trip %v, %v; want >= 200ms", d, err)
	}
	if code, _ := put(t, ctl.URL+"/delay?d=0s"); code != http.StatusOK {
		t.Fatalf("PUT /delay?d=0s: %d", code)
	}

	if code, body := put(t, ctl.URL+"/request-delay?d=200ms"); code != http.StatusOK || body["request_delay"] != "200ms" || body["delay"] != "0s" {
		t.Fatalf("PUT /request-delay: %d %v", code, body)
	}
	if d, err := roundTrip(t, conn, r); err != nil || d < 200*time.Millisecond {
		t.Fatalf("with request delay 200ms: round trip %v, %v; want >= 200ms", d, err)
	}
	if code, _ := put(t, ctl.URL+"/request-delay?d=0s"); code != http.StatusOK {
		t.Fatalf("PUT /request-delay?d=0s: %d", code)
	}

	if code, body := put(t, ctl.URL+"/down?v=true"); code != http.StatusOK || body["down"] != true {
		t.Fatalf("PUT /down?v=true: %d %v", code, body)
	}
	if _, err := roundTrip(t, conn, r); err == nil {
		t.Fatal("proxy down: the open connection still answers")
	}
	if code, _ := put(t, ctl.URL+"/down?v=false"); code != http.StatusOK {
		t.Fatalf("PUT /down?v=false: %d", code)
	}
	conn2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if _, err := roundTrip(t, conn2, bufio.NewReader(conn2)); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

func TestControlRejectsBadInput(t *testing.T) {
	_, ctl := controlledProxy(t)
	for _, path := range []string{"/delay?d=soon", "/delay?d=-1s", "/delay", "/request-delay?d=-1s", "/request-delay", "/down?v=maybe"} {
		if code, _ := put(t, ctl.URL+path); code != http.StatusBadRequest {
			t.Errorf("PUT %s: %d, want 400", path, code)
		}
	}
}

func TestRequireLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:7001": true, "[::1]:7001": true, "localhost:7001": true,
		"0.0.0.0:7001": false, ":7001": false, "10.0.0.1:7001": false,
	} {
		if err := requireLoopback(addr); (err == nil) != ok {
			t.Errorf("requireLoopback(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}
