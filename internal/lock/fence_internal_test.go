package lock

import (
	"strings"
	"testing"
)

func TestFenceKeyOf(t *testing.T) {
	for _, tc := range []struct{ key, fence, err string }{
		{"seckill:{act:7}:lock", "seckill:{act:7}:lock:fence", ""},
		{"t:ab12:seckill:{act:7}:lock", "t:ab12:seckill:{act:7}:lock:fence", ""},
		{"user:42:lock", "{user:42:lock}:fence", ""},
		{"a{b", "{a{b}:fence", ""},
		{"a{}b", "", "contains '}'"},
		{"a}b", "", "contains '}'"},
	} {
		got, err := fenceKeyOf(tc.key)
		if got != tc.fence || (err == nil) != (tc.err == "") {
			t.Errorf("fenceKeyOf(%q) = %q, %v; want %q (error: %q)", tc.key, got, err, tc.fence, tc.err)
		}
		if err == nil && slot(got) != slot(tc.key) {
			t.Errorf("fence key %q is not in the slot of %q", got, tc.key)
		}
	}
}

// slot returns the Redis Cluster hash slot of key (CRC16/XMODEM of its hash
// tag, or of the whole key without one).
func slot(key string) uint16 {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

func TestReleasedKeyOf(t *testing.T) {
	for key, want := range map[string]string{
		"seckill:{act:7}:lock": "seckill:{act:7}:lock:released:tok",
		"user:42:lock":         "{user:42:lock}:released:tok",
	} {
		got, err := releasedKeyOf(key, "tok:")
		if err != nil || got != want {
			t.Errorf("releasedKeyOf(%q) = %q, %v; want %q", key, got, err, want)
		}
		if slot(got) != slot(key) {
			t.Errorf("release marker %q is not in the slot of %q", got, key)
		}
	}
}
