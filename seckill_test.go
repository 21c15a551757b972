package seckill_test

import (
	"errors"
	"fmt"
	"strings"
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

// TestHoldsSaysWhatTheOrderMeans: a buyer whose order of the sale expired
// (cancelled, or not paid in time) is told so on buying again, not that
// they "hold an order" as if they had bought.
// Can fail: one message for every status.
func TestHoldsSaysWhatTheOrderMeans(t *testing.T) {
	for status, want := range map[string]string{
		seckill.OrderStatusCreated: "unpaid order", seckill.OrderStatusPaid: "already bought",
		seckill.OrderStatusExpired: "cancelled or expired", seckill.OrderStatusRefunded: "refunded",
		seckill.OrderStatusRefundRequired: "refunded", "": "already holds an order",
	} {
		e := seckill.Holds(seckill.Order{ID: "o1", Status: status})
		if e.Code != seckill.EAlreadyPurchased || e.OrderID != "o1" || !strings.Contains(e.Message, want) {
			t.Errorf("Holds(%q) = %s %q, want already_purchased saying %q", status, e.Code, e.Message, want)
		}
	}
}

// An unannounced activity answers joins 404 until its start, so its room
// could hold no draw: refused, naming both fields, whether the room opens
// before the start or exactly at it. An announced one may open at the start.
//
// Can fail: with the old check (opens_at before starts_at only), the room
// opening at the start was accepted.
func TestUnannouncedRoomIsRefusedAtOrBeforeTheStart(t *testing.T) {
	starts := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	activity := func(unannounced bool, opens time.Time) seckill.Activity {
		return seckill.Activity{Name: "a", TotalStock: 1, StartsAt: starts, EndsAt: starts.Add(time.Hour),
			Unannounced: unannounced, WaitingRoom: &seckill.WaitingRoom{OpensAt: opens}}
	}
	for _, opens := range []time.Time{starts.Add(-time.Minute), starts} {
		err := activity(true, opens).Validate()
		var e *seckill.Error
		if !errors.As(err, &e) || e.Code != seckill.EInvalid || !strings.Contains(e.Message, "announced") || !strings.Contains(e.Message, "opens_at") {
			t.Errorf("unannounced, room opening at %s: %v, want invalid_request naming announced and opens_at", opens.Format(time.TimeOnly), err)
		}
	}
	if err := activity(false, starts).Validate(); err != nil {
		t.Errorf("announced, room opening at the start: %v", err)
	}
}

// An activity's name is checked by the domain, not only over HTTP: blank,
// control characters and lengths outside 1..MaxActivityName are refused.
// Can fail: a rule kept in the HTTP layer lets a blank name in through Go.
func TestValidateRefusesBlankAndControlNames(t *testing.T) {
	starts := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	for name, ok := range map[string]bool{
		"Moutai 53%": true, "": false, "   ": false, "\t": false, "a\x00b": false, "a\nb": false, "a\u0085b": false,
		strings.Repeat("é", seckill.MaxActivityName): true, strings.Repeat("é", seckill.MaxActivityName+1): false, "\xff": false,
	} {
		err := seckill.Activity{Name: name, TotalStock: 1, StartsAt: starts, EndsAt: starts.Add(time.Hour)}.Validate()
		var e *seckill.Error
		if got := err == nil; got != ok || (!ok && (!errors.As(err, &e) || e.Code != seckill.EInvalid)) {
			t.Errorf("Validate with name %q: %v, want accepted %v", name, err, ok)
		}
	}
}

// Final and Retryable group the codes as the contract does.
// Can fail: a code moved between groups, or a nil *Error that panics.
func TestFinalAndRetryable(t *testing.T) {
	for code, want := range map[string][2]bool{
		seckill.ESoldOut: {true, false}, seckill.EEnded: {true, false}, seckill.ENotStarted: {true, false},
		seckill.EBusy: {false, true}, seckill.EUnavailable: {false, true}, seckill.EOutcomeUnknown: {false, true},
		seckill.EPaused: {}, seckill.ENotAdmitted: {}, seckill.EAlreadyPurchased: {}, seckill.EInvalid: {},
	} {
		e := &seckill.Error{Code: code}
		if e.Final() != want[0] || e.Retryable() != want[1] {
			t.Errorf("%s: Final %v, Retryable %v; want %v, %v", code, e.Final(), e.Retryable(), want[0], want[1])
		}
	}
	var none *seckill.Error
	if none.Final() || none.Retryable() {
		t.Error("a nil *Error is neither final nor retryable")
	}
}
