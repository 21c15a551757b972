package redisacl_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill/internal/redisacl"
)

// The service's user gets its namespace and the stream, nothing wider; a
// prefix's glob characters match themselves alone; the password is there
// only as its SHA-256.
func TestServiceUser(t *testing.T) {
	for _, c := range []struct {
		prefix, stream string
		keys           []string
	}{
		{"", "events", []string{"seckill:*", "events"}},
		{"shop1:", "shop1:events", []string{"shop1:seckill:*", "shop1:events"}},
		{"p*[1]?:", "p*[1]?:seckill:events", []string{`p\*\[1\]\?:seckill:*`}},
		{"", "orders.events", []string{"seckill:*", "orders.events"}},
	} {
		u, err := redisacl.Service("seckill", "s3cret", c.prefix, c.stream)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(u.Keys, c.keys) || !slices.Equal(u.Channels, c.keys[:1]) {
			t.Errorf("prefix %q, stream %q: keys %q, channels %q; want keys %q, channels %q", c.prefix, c.stream, u.Keys, u.Channels, c.keys, c.keys[:1])
		}
		line := u.SetUser()
		if strings.Contains(line, "s3cret") || !strings.Contains(line, " "+redisacl.PasswordRule("s3cret")+" ") {
			t.Errorf("the rules hold the password, or not its hash: %s", line)
		}
		if !strings.HasPrefix(line, "ACL SETUSER seckill reset on #") || !strings.Contains(line, " resetchannels ") || !strings.Contains(line, " -@all +") {
			t.Errorf("the rules do not start from nothing: %s", line)
		}
	}
	if got := redisacl.PasswordRule("abc"); got != "#ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("PasswordRule(abc) = %s", got)
	}
}

// The consumers' user may read the stream alone, and never write an entry.
func TestConsumerUser(t *testing.T) {
	u, err := redisacl.EventsConsumer("seckill-events", "pw", "shop1:events")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(u.Keys, []string{"shop1:events"}) || len(u.Channels) != 0 {
		t.Errorf("keys %q, channels %q", u.Keys, u.Channels)
	}
	for _, c := range []string{"xadd", "xdel", "xtrim", "xsetid", "xgroup|destroy", "xgroup|setid", "del", "eval", "evalsha"} {
		if slices.Contains(u.Commands, c) {
			t.Errorf("the consumers may %s", c)
		}
	}
	for _, c := range []string{"xread", "xreadgroup", "xack", "xinfo"} {
		if !slices.Contains(u.Commands, c) {
			t.Errorf("the consumers may not %s", c)
		}
	}
}

// A name or pattern with white space cannot be one word of a rule.
func TestBadNamesRefused(t *testing.T) {
	for _, c := range [][3]string{{"", "", "events"}, {"sec kill", "", "events"}, {"seckill", "a b:", "events"}, {"seckill", "", "ev\tents"}} {
		if _, err := redisacl.Service(c[0], "pw", c[1], c[2]); !errors.Is(err, redisacl.ErrBadName) {
			t.Errorf("Service(%q, prefix %q, stream %q) = %v, want ErrBadName", c[0], c[1], c[2], err)
		}
	}
}
