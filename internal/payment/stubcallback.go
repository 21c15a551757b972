package payment

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
)

// The stub's notifications: signed callbacks to the service, sent later.

func (s *Stub) later(d time.Duration, f func()) {
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			f()
		case <-s.ctx.Done():
		}
	}()
}

func (s *Stub) callbackBase() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callbackURL
}

// sendCallback posts one signed notification about the order to the service.
func (s *Stub) sendCallback(orderID, status string) {
	body, _ := json.Marshal(map[string]string{"order_id": orderID, "status": status})
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.callbackBase()+"/api/v1/payments/callback", bytes.NewReader(body))
	if err != nil {
		s.log.Warn("paystub: callback", "order_id", orderID, "err", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	// Signed with a timestamp, as docs/API.md asks of providers.
	ts, sig := SignAt(s.secret, body, time.Now())
	req.Header.Set("X-Signature-Timestamp", ts)
	req.Header.Set("X-Signature", sig)
	resp, err := s.client.Do(req)
	if err != nil {
		s.log.Warn("paystub: callback", "order_id", orderID, "err", err)
		return
	}
	_ = resp.Body.Close()
	s.log.Info("paystub: callback sent", "order_id", orderID, "status", resp.StatusCode)
}
