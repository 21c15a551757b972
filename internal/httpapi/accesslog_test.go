package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestAccessLog(t *testing.T) {
	var logs bytes.Buffer
	h := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: newFake(), Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
	serve(h, request{"POST", "/api/v1/activities/1/orders", "", user("42", "X-Request-ID", "rid-1")})
	serve(h, request{"GET", "/admin/v1/activities/1/audit", "", admin})
	serve(h, request{"GET", "/admin/v1/activities/1/audit", "", []string{"Authorization", "Bearer wrong-token-value"}})

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want 3:\n%s", len(lines), logs.String())
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if _, ok := first["duration_ms"].(float64); !ok {
		t.Errorf("log has no numeric duration_ms: %s", lines[0])
	}
	for k, want := range map[string]any{"request_id": "rid-1", "method": "POST", "route": "/api/v1/activities/:id/orders", "status": float64(201), "user_id": float64(42)} {
		if first[k] != want {
			t.Errorf("log %s = %v, want %v", k, first[k], want)
		}
	}
	if !strings.Contains(lines[2], `"code":"unauthenticated"`) {
		t.Errorf("rejection without its code: %s", lines[2])
	}
	for _, secret := range []string{adminToken, "wrong-token-value", "Bearer"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("log holds %q:\n%s", secret, logs.String())
		}
	}
}
