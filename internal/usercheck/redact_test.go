package usercheck

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestURLPasswordNeverLogged: a password in SECKILL_USERCHECK_URL reaches
// neither the log (an unusable URL is logged at start) nor a verification's
// error (which the purchase path logs).
func TestURLPasswordNeverLogged(t *testing.T) {
	for _, raw := range []string{
		"ftp://user:s3cret@127.0.0.1:1",         // not http(s)
		"http://user:s3cret@127.0.0.1:notaport", // does not parse
		"http://user:s3cret@127.0.0.1:1",        // nobody answers
	} {
		var logs bytes.Buffer
		c := New(Config{BaseURL: raw, Timeout: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		err := c.Verify(context.Background(), 1, 1)
		c.Close()
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Verify with %s: %v; want an error without the password", raw, err)
		}
		if strings.Contains(logs.String(), "s3cret") {
			t.Errorf("the log shows the password of %s:\n%s", raw, logs.String())
		}
	}
}
