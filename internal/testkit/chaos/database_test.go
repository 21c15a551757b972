package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestCommitHold(t *testing.T) {
	packet := func(cmd byte, stmt string) []byte {
		n := 1 + len(stmt)
		return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), 0, cmd}, stmt...)
	}
	var h commitHold
	all := h.newMatch()
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"COMMIT", packet(0x03, "COMMIT"), true},
		{"lower case", packet(0x03, "commit"), true},
		{"an insert", packet(0x03, "INSERT INTO orders VALUES (1)"), false},
		{"a prepared statement's execute", packet(0x17, "COMMIT"), false},
		{"length not the chunk's", append(packet(0x03, "COMMIT"), 0), false},
		{"too short", []byte{1, 0, 0}, false},
	} {
		if got := all(c.b); got != c.want {
			t.Errorf("every COMMIT: %s: hold = %v, want %v", c.name, got, c.want)
		}
	}

	h.statusOnly.Store(true)
	h.delay.Store(int64(20 * time.Second))
	var held []int64
	onHeld := func(activity int64, d time.Duration) {
		if d != 20*time.Second {
			t.Errorf("held for %v, want 20s", d)
		}
		held = append(held, activity)
	}
	h.held.Store(&onHeld)
	conn := h.newMatch()
	for _, c := range []struct {
		stmt string
		want bool
	}{
		{"UPDATE activities SET sold = sold + 2, fence = 9 WHERE id = 1", false},
		{"COMMIT", false}, // a batch's
		{"UPDATE orders SET status = 'expired', paid_at = NULL WHERE id = 'o1'", false},
		{"UPDATE activities SET sold = sold - (SELECT quantity FROM orders WHERE id = 'o1')\nWHERE id = 1 AND sold >= (SELECT quantity FROM orders WHERE id = 'o1')", false},
		{"COMMIT", true}, // the status change's
		{"COMMIT", false},
		{"UPDATE orders SET status = 'paid' WHERE id = 'o2'", false},
		{"ROLLBACK", false},
		{"COMMIT", false},
	} {
		if got := conn(packet(0x03, c.stmt)); got != c.want {
			t.Errorf("status changes only: %q: hold = %v, want %v", c.stmt, got, c.want)
		}
	}
	if len(held) != 1 || held[0] != 1 {
		t.Errorf("rows held %v, want activity 1's once (the expiry's)", held)
	}
	if err := h.Unread(); err != nil {
		t.Errorf("every give-back was read: %v", err)
	}
	// A give-back the kit cannot read (the form of one unit an order) is
	// counted, and fails the campaign (Unread), rather than leave the
	// late-status-commit's accounting silently off.
	for _, stmt := range []string{"UPDATE orders SET status = 'expired' WHERE id = 'o3'", "UPDATE activities SET sold = sold - 1 WHERE id = 1 AND sold > 0", "COMMIT"} {
		conn(packet(0x03, stmt))
	}
	if err := h.Unread(); err == nil || !strings.Contains(err.Error(), "1 give-back statements") {
		t.Errorf("an unread give-back: %v, want the campaign's error", err)
	}
}
