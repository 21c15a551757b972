package main

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// curlLine is one printed `curl` line, as curl would run it.
type curlLine struct {
	raw, method, url, body string
	header                 http.Header
	newline                bool // -w '\n': the answer ends with a newline
}

// parseCurl reads a printed curl line: the options the demo prints
// (-s, -w, -X, -H, -d) and one URL, with shell quoting. Anything else (a
// placeholder to replace, a command substitution) fails the test: the line
// must run as printed.
func parseCurl(t *testing.T, line string) curlLine {
	t.Helper()
	words := shellWords(t, line)
	if len(words) == 0 || words[0] != "curl" {
		t.Fatalf("not a curl line: %q", line)
	}
	c := curlLine{raw: line, method: "GET", header: http.Header{}}
	for i := 1; i < len(words); i++ {
		arg := func() string {
			i++
			if i >= len(words) {
				t.Fatalf("%q: %s without its value", line, words[i-1])
			}
			return words[i]
		}
		switch w := words[i]; w {
		case "-s":
		case "-w":
			c.newline = arg() == `\n`
		case "-X":
			c.method = arg()
		case "-H":
			k, v, ok := strings.Cut(arg(), ":")
			if !ok {
				t.Fatalf("%q: bad header", line)
			}
			c.header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		case "-d":
			c.body = arg()
			if c.method == "GET" {
				c.method = "POST"
			}
		default:
			if strings.HasPrefix(w, "-") || c.url != "" || !strings.HasPrefix(w, "http://") {
				t.Fatalf("%q: cannot run %q as printed", line, w)
			}
			c.url = w
		}
	}
	if c.url == "" || strings.ContainsAny(c.url, "$`") || strings.Contains(c.url, "ORDER_ID") {
		t.Fatalf("%q: no URL ready to use", line)
	}
	if c.body != "" {
		c.header.Set("Content-Type", "application/x-www-form-urlencoded") // curl -d's
	}
	return c
}

// shellWords splits a line as sh would, for single and double quotes and
// no expansion (a $ outside single quotes fails the test).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '$' || ch == '`' || ch == '\\':
			t.Fatalf("%q: needs the shell to expand %q", line, ch)
		case quote == '"':
			if ch == '"' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("%q: unbalanced quote", line)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// do runs the line and returns the status and the answer's body.
func (c curlLine) do(t *testing.T) (int, string) {
	t.Helper()
	req, err := http.NewRequest(c.method, c.url, strings.NewReader(c.body))
	if err != nil {
		t.Fatalf("%s: %v", c.raw, err)
	}
	req.Header = c.header.Clone()
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.raw, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// demoLines are the banner's curl lines, each ready to run.
func demoLines(t *testing.T, out string) []curlLine {
	t.Helper()
	var lines []curlLine
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "curl ") {
			c := parseCurl(t, l)
			if !c.newline {
				t.Errorf("%q: the answer ends without a newline (no -w '\\n'): the prompt lands on it", l)
			}
			lines = append(lines, c)
		}
	}
	return lines
}

// find is the one printed line whose method and URL match.
func find(t *testing.T, lines []curlLine, method, urlPart string) curlLine {
	t.Helper()
	var found []curlLine
	for _, l := range lines {
		if l.method == method && strings.Contains(l.url, urlPart) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d printed %s lines with %q, want 1: %v", len(found), method, urlPart, lines)
	}
	return found[0]
}

// TestDemoLinesInOrder runs the banner's lines as printed, in the order a
// person tries them: buy, view the order, pay it through the stub, view it
// again, which shows it paid within 2 s. Viewing before paying marks the
// order queried for a second; the embedded Redis must let that mark expire
// in real time, or the callback waits for ever and the order stays created.
func TestDemoLinesInOrder(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("gorm.io/gorm/internal/lru.NewLRU[...].func1"))

	p := start(t, map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0"})
	p.addr()
	lines := demoLines(t, p.stdout.String())
	if len(lines) != 8 {
		t.Fatalf("%d curl lines, want 8:\n%s", len(lines), p.stdout)
	}
	if said := readmeCurlCount(t); said != len(lines) {
		t.Errorf("README.md says the demo prints %d curl lines; it prints %d", said, len(lines))
	}
	buy := find(t, lines, "POST", "/activities/1/orders")
	view := find(t, lines, "GET", "/orders/mine")

	// The waiting room's lines: before its start a join is a place in the
	// pre-queue, and buying is not_started.
	join := find(t, lines, "POST", "/queue")
	if code, body := join.do(t); code != http.StatusOK || !strings.Contains(body, `"state":"prequeue"`) {
		t.Fatalf("join: %d %s", code, body)
	}
	if code, body := find(t, lines, "GET", "/queue/mine").do(t); code != http.StatusOK || !strings.Contains(body, `"state":"prequeue"`) {
		t.Fatalf("poll: %d %s", code, body)
	}
	if code, body := find(t, lines, "POST", "/activities/2/orders").do(t); code != http.StatusConflict || !strings.Contains(body, "not_started") {
		t.Fatalf("buy before the room's start: %d %s", code, body)
	}
	pay := find(t, lines, "PUT", "/stub/")

	if code, body := buy.do(t); code != http.StatusCreated {
		t.Fatalf("buy: %d %s", code, body)
	}
	if code, body := view.do(t); code != http.StatusOK || !strings.Contains(body, `"status":"created"`) {
		t.Fatalf("view before paying: %d %s", code, body)
	}
	if code, body := pay.do(t); code != http.StatusAccepted {
		t.Fatalf("pay: %d %s", code, body)
	}
	paid := time.Now()
	for {
		code, body := view.do(t)
		if code == http.StatusOK && strings.Contains(body, `"status":"paid"`) {
			break
		}
		if time.Since(paid) > 2*time.Second {
			t.Fatalf("not paid 2s after paying: %d %s\nstderr:\n%s", code, body, p.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The callback was answered, not left waiting.
	var sent string
	testenv.WaitFor(t, 5*time.Second, "the payment stub's callback sent", func() bool {
		for _, l := range strings.Split(p.stderr.String(), "\n") {
			if strings.Contains(l, `"paystub: callback sent"`) {
				sent = l
			}
		}
		return sent != ""
	})
	if !strings.Contains(sent, `"status":200`) {
		t.Errorf("the stub's callback was not answered 200: %s", sent)
	}
	tailEvents(t, p.stdout.String())
	if err := p.stop(); err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}

// tailEvents runs the banner's events line as printed, after a purchase:
// it must start the program the way the README starts the demo (there is
// no seckill binary after `go run`), and print the order's events.
//
// Can fail: with the line printed as "SECKILL_REDIS_URL=... seckill events
// tail", "the events line runs \"seckill\", not go run ./cmd/seckill".
func tailEvents(t *testing.T, out string) {
	t.Helper()
	var line string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, " events tail") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no events tail line printed:\n%s", out)
	}
	words := shellWords(t, line)
	env := map[string]string{}
	for len(words) > 0 && strings.Contains(words[0], "=") {
		k, v, _ := strings.Cut(words[0], "=")
		env[k] = v
		words = words[1:]
	}
	cmd := strings.Fields(demoCommand)
	if len(words) < len(cmd) || strings.Join(words[:len(cmd)], " ") != demoCommand || readmeDemoCommand(t) != demoCommand {
		t.Fatalf("%q: the events line runs %q, not %s (the README's command)", line, words[0], readmeDemoCommand(t))
	}
	tail := start(t, env, words[len(cmd):]...)
	testenv.WaitFor(t, 10*time.Second, "events tail to print order.created", func() bool { return strings.Contains(tail.stdout.String(), `"type":"order.created"`) })
	if err := tail.stop(); err != nil {
		t.Errorf("%q: %v", line, err)
	}
}

// readmeDemoCommand is the demo's command as README.md's first screen
// gives it.
func readmeDemoCommand(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(b)) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "go run ./cmd/seckill") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	t.Fatal("README.md gives no go run ./cmd/seckill line")
	return ""
}

// readmeCurlCount is how many curl lines README.md says the demo prints:
// "prints eight `curl` lines".
func readmeCurlCount(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)prints\\s+(\\w+)\\s+`curl`\\s+lines").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md does not say how many `curl` lines the demo prints")
	}
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	for n, w := range words {
		if strings.EqualFold(string(m[1]), w) || string(m[1]) == strconv.Itoa(n) {
			return n
		}
	}
	t.Fatalf("README.md says the demo prints %q curl lines: not a count", m[1])
	return 0
}
