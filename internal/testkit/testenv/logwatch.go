package testenv

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// LogWatch keeps a service's JSON log (its stderr) and announces the address
// of its first "listening" line, so a test waits for the server instead of
// sleeping. It is safe for concurrent use.
type LogWatch struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	scanned   int
	listening chan string
	announced bool
}

// NewLogWatch returns an empty LogWatch.
func NewLogWatch() *LogWatch { return &LogWatch{listening: make(chan string, 1)} }

// Write implements io.Writer. Lines may arrive split across writes.
func (l *LogWatch) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(b)
	for !l.announced {
		rest := l.buf.Bytes()[l.scanned:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		l.scanned += i + 1
		var line struct{ Msg, Addr string }
		if json.Unmarshal(rest[:i], &line) == nil && line.Msg == "listening" && line.Addr != "" {
			l.listening <- line.Addr
			l.announced = true
		}
	}
	return len(b), nil
}

// Listening gets the address of the first "listening" line.
func (l *LogWatch) Listening() <-chan string { return l.listening }

// String returns the whole log so far.
func (l *LogWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Tail returns the log's last n lines.
func (l *LogWatch) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(l.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
