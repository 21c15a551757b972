package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// counter is a TCP proxy between the service and Redis that counts the
// commands the service sends, by name: the server's own counters
// (INFO commandstats) add up every client of a shared Redis, this counts
// one instance's alone. Replies pass through untouched.
type counter struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	byName map[string]int64
	total  int64
}

func newCounter(target string) (*counter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the counting proxy cannot listen: %w", err)
	}
	c := &counter{ln: ln, target: target, byName: map[string]int64{}}
	go c.accept()
	return c, nil
}

func (c *counter) addr() string { return c.ln.Addr().String() }

func (c *counter) close() { _ = c.ln.Close() }

func (c *counter) accept() {
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.pipe(client)
	}
}

// pipe forwards one connection both ways. The service's bytes are read
// through a tee that hands them to Redis as soon as they arrive; the
// parser reads the same bytes behind it, so counting adds no wait.
func (c *counter) pipe(client net.Conn) {
	defer func() { _ = client.Close() }()
	server, err := net.Dial("tcp", c.target)
	if err != nil {
		return
	}
	defer func() { _ = server.Close() }()
	go func() {
		_, _ = io.Copy(client, server)
		_ = client.Close()
	}()
	r := bufio.NewReader(io.TeeReader(client, server))
	for {
		name, err := readCommand(r)
		if err != nil {
			return
		}
		c.mu.Lock()
		c.byName[name]++
		c.total++
		c.mu.Unlock()
	}
}

// snapshot is the counts so far: the total and a copy by name.
func (c *counter) snapshot() (int64, map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int64, len(c.byName))
	for k, v := range c.byName {
		m[k] = v
	}
	return c.total, m
}

// readCommand reads one RESP command (an array of bulk strings, or an
// inline command) and returns its name in upper case.
func readCommand(r *bufio.Reader) (string, error) {
	line, err := readLine(r)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(line, "*") {
		name, _, _ := strings.Cut(line, " ")
		return strings.ToUpper(name), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil {
		return "", fmt.Errorf("RESP array header %q: %w", line, err)
	}
	name := ""
	for i := 0; i < n; i++ {
		arg, err := readBulk(r)
		if err != nil {
			return "", err
		}
		if i == 0 {
			name = strings.ToUpper(arg)
		}
	}
	return name, nil
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// readBulk reads one bulk string; only a command's name is kept, so an
// argument is returned only when it is short.
func readBulk(r *bufio.Reader) (string, error) {
	line, err := readLine(r)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(line, "$") {
		return "", errors.New("RESP: a command argument that is not a bulk string")
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 {
		return "", fmt.Errorf("RESP bulk header %q", line)
	}
	if n > 64 {
		_, err := r.Discard(n + 2)
		return "", err
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b[:n]), nil
}
