package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// With SECKILL_ADMIN_ADDR, /metrics, pprof and the admin API answer on that
// listener only; the public one answers them 404.
func TestServeAdminListener(t *testing.T) {
	p := start(t, map[string]string{"SECKILL_HTTP_ADDR": "127.0.0.1:0", "SECKILL_ADMIN_ADDR": "127.0.0.1:0"})
	base := "http://" + p.addr()
	adminAddr := adminAddrOf(t, p.stderr.String())
	if adminAddr == "" {
		t.FailNow()
	}
	// Start-up names the identity mode; on loopback, no warning.
	if logs := p.stderr.String(); !strings.Contains(logs, `"identity_mode":"trusted X-User-ID"`) || strings.Contains(logs, "is trusted unsigned on a listener") {
		t.Errorf("identity mode not logged as trusted without a warning:\n%s", logs)
	}
	admin := "http://" + adminAddr
	token := regexp.MustCompile(`generated for this run\): (\w+)`).FindStringSubmatch(p.stdout.String())
	if token == nil {
		t.Fatalf("no token in the banner:\n%s", p.stdout)
	}
	get := func(url string, auth bool) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer "+token[1])
		}
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{"/metrics", "/debug/pprof/", "/admin/v1/activities/1/audit"} {
		if code, _ := get(base+path, true); code != http.StatusNotFound {
			t.Errorf("public %s = %d, want 404", path, code)
		}
	}
	if code, body := get(admin+"/metrics", false); code != http.StatusOK || !strings.Contains(body, "seckill_http_requests_total") {
		t.Errorf("admin /metrics = %d", code)
	}
	if code, _ := get(admin+"/debug/pprof/heap?debug=1", true); code != http.StatusOK {
		t.Errorf("admin pprof heap = %d", code)
	}
	// pprof needs the admin token.
	if code, _ := get(admin+"/debug/pprof/heap?debug=1", false); code != http.StatusUnauthorized {
		t.Errorf("admin pprof heap without the token = %d, want 401", code)
	}
	if code, _ := get(admin+"/admin/v1/activities/1/audit", true); code != http.StatusOK {
		t.Errorf("admin audit = %d", code)
	}
	if code, _ := get(base+"/api/v1/activities/1", false); code != http.StatusOK {
		t.Errorf("public activity = %d", code)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
