package chaos

import "testing"

func TestIsCommit(t *testing.T) {
	packet := func(seq byte, cmd byte, stmt string) []byte {
		n := 1 + len(stmt)
		return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq, cmd}, stmt...)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"COMMIT", packet(0, 0x03, "COMMIT"), true},
		{"lower case", packet(0, 0x03, "commit"), true},
		{"an insert", packet(0, 0x03, "INSERT INTO orders VALUES (1)"), false},
		{"a prepared statement's execute", packet(0, 0x17, "COMMIT"), false},
		{"length not the chunk's", append(packet(0, 0x03, "COMMIT"), 0), false},
		{"too short", []byte{1, 0, 0}, false},
	} {
		if got := isCommit(c.b); got != c.want {
			t.Errorf("%s: isCommit = %v, want %v", c.name, got, c.want)
		}
	}
}
