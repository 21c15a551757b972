package seckill_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// The hand-written envelope against the CloudEvents 1.0 spec (JSON format)
// and the contract: the required attributes with their types, RFC 3339
// time, the extension `sequence` a lowercase alphanumeric name of at most
// 20 characters, and `data` the order's API body.
func TestOrderEventIsACloudEvent(t *testing.T) {
	o := seckill.Order{ID: "0190-a", ActivityID: 3, UserID: 7, Status: seckill.OrderStatusPaid, Quantity: 2, PriceMinor: 1999, Currency: "EUR",
		CreatedAt: time.Date(2026, 11, 27, 10, 0, 0, 123000, time.UTC), PaidAt: time.Date(2026, 11, 27, 10, 1, 0, 0, time.UTC)}
	raw, err := json.Marshal(seckill.NewOrderEvent("ev-1", o, 2, time.Date(2026, 11, 27, 10, 1, 1, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"specversion": "1.0", "id": "ev-1", "source": "seckill", "type": "order.paid",
		"subject": "0190-a", "datacontenttype": "application/json", "sequence": 2.0}
	for k, v := range want {
		if ev[k] != v {
			t.Errorf("%s: %v, want %v", k, ev[k], v)
		}
	}
	if _, err := time.Parse(time.RFC3339, ev["time"].(string)); err != nil {
		t.Errorf("time %v: %v", ev["time"], err)
	}
	name := regexp.MustCompile(`^[a-z0-9]{1,20}$`)
	for k := range ev {
		if !name.MatchString(k) {
			t.Errorf("attribute %q: CloudEvents names are lowercase letters and digits, at most 20", k)
		}
	}
	var data seckill.OrderBody
	if err := json.Unmarshal(raw, &struct {
		Data *seckill.OrderBody `json:"data"`
	}{&data}); err != nil || data != o.Body() {
		t.Errorf("data %+v (%v), the order's body %+v", data, err, o.Body())
	}
	// Quantity per buyer: the event carries the order's units and amount.
	if data.Quantity != 2 || data.AmountMinor != 3998 {
		t.Errorf("data carries quantity %d, amount_minor %d; want 2 and 3998", data.Quantity, data.AmountMinor)
	}
}
