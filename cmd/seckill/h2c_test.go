package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A gateway may hold many long polls on a few connections: the public
// listener speaks HTTP/2 without TLS to a client that opens with it, beside
// HTTP/1.1, unless SECKILL_HTTP2_CLEARTEXT=false; the admin listener never
// does.
func TestPublicListenerSpeaksH2C(t *testing.T) {
	h2c := &http.Client{Timeout: 10 * time.Second, Transport: h2cTransport()}
	http1 := &http.Client{Timeout: 10 * time.Second}
	proto := func(c *http.Client, url string) (int, error) {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d", url, resp.StatusCode)
		}
		return resp.ProtoMajor, nil
	}
	for _, on := range []bool{true, false} {
		env := map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_ADMIN_ADDR": "127.0.0.1:0"}
		if !on {
			env["SECKILL_HTTP2_CLEARTEXT"] = "false"
		}
		p := start(t, env)
		base := "http://" + p.addr()
		major, err := proto(h2c, base+"/api/v1/activities/1")
		switch {
		case on && (err != nil || major != 2):
			t.Errorf("h2c client on the public listener: HTTP/%d, %v; want HTTP/2", major, err)
		case !on && err == nil:
			t.Errorf("SECKILL_HTTP2_CLEARTEXT=false: an h2c client was answered (HTTP/%d)", major)
		}
		if major, err := proto(http1, base+"/healthz"); err != nil || major != 1 {
			t.Errorf("HTTP/1.1 client: HTTP/%d, %v", major, err)
		}
		if admin := adminAddrOf(t, p.stderr.String()); admin != "" {
			if _, err := proto(h2c, "http://"+admin+"/healthz"); err == nil {
				t.Errorf("the admin listener answered an h2c client")
			}
		}
		if err := p.stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
	}
}

// h2cTransport speaks HTTP/2 without TLS only, as a gateway's upstream does.
func h2cTransport() *http.Transport {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{Protocols: &p}
}

// adminAddrOf reads the admin listener's address from the start-up log.
func adminAddrOf(t *testing.T, logs string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		var rec struct {
			Msg       string
			AdminAddr string `json:"admin_addr"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" && rec.AdminAddr != "" {
			return rec.AdminAddr
		}
	}
	t.Errorf("no admin_addr in the listening line:\n%s", logs)
	return ""
}
