package seckill_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

func TestStatusAt(t *testing.T) {
	start := time.Date(2026, 11, 11, 0, 0, 0, 0, time.UTC)
	a := seckill.Activity{TotalStock: 10, StartsAt: start, EndsAt: start.Add(time.Hour)}
	cases := []struct {
		now       time.Time
		remaining int64
		want      string
	}{
		{start.Add(-time.Nanosecond), 10, seckill.StatusUpcoming},
		{start, 10, seckill.StatusActive},
		{start, 0, seckill.StatusSoldOut},
		{start.Add(time.Hour - time.Nanosecond), 1, seckill.StatusActive},
		{start.Add(time.Hour), 10, seckill.StatusEnded},
		{start.Add(time.Hour), 0, seckill.StatusEnded},
	}
	for _, c := range cases {
		if got := a.StatusAt(c.now, c.remaining); got != c.want {
			t.Errorf("StatusAt(%v, %d) = %s, want %s", c.now, c.remaining, got, c.want)
		}
	}
}

func TestErrorKeepsItsCause(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	wrapped := fmt.Errorf("buy: %w", &seckill.Error{Code: seckill.EUnavailable, Message: "Redis did not answer", Err: cause})
	var e *seckill.Error
	if !errors.As(wrapped, &e) || e.Code != seckill.EUnavailable {
		t.Fatalf("errors.As found %v", e)
	}
	if !errors.Is(wrapped, cause) {
		t.Error("the cause is not reachable with errors.Is")
	}
	if got := seckill.Errorf(seckill.ESoldOut, "no stock left in %d", 7).Error(); got != "sold_out: no stock left in 7" {
		t.Errorf("Error() = %q", got)
	}
}
