package chaos

// The workload's requests: one sent to a random instance and recorded in
// the history, and what its answer says.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// sent is an operation as sent, with what the client needs next.
type sent struct {
	*Op
	retryAfter time.Duration
}

// send sends one request to a random instance and records it in the
// history. A refused connection is an answer (nothing reached the
// service); any other transport error, or no answer within
// answerTimeout, is unknown.
func (w *workload) send(client int, rng *rand.Rand, o Op, method, path string, body []byte, header ...string) sent {
	o.Client, o.Instance = client, rng.IntN(len(w.c.instances))
	in := w.c.instances[o.Instance]
	req, err := http.NewRequest(method, in.url+path, bytes.NewReader(body))
	if err != nil {
		panic(err) // the campaign's own paths and methods
	}
	if o.User != 0 {
		req.Header.Set("X-User-ID", strconv.FormatInt(o.User, 10))
	}
	if o.Key != "" {
		req.Header.Set("Idempotency-Key", o.Key)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// A request with an Idempotency-Key is one Go's Transport sends again
	// on a new connection when the first fails: the last error can be a
	// refused connection although an earlier attempt reached the service.
	// Only a request never written is known to have done nothing.
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) },
	}))
	op := w.h.Invoke(o)
	res, err := w.client.Do(req)
	s := sent{Op: op, retryAfter: 0}
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) && !wrote.Load() {
			op.Code = "refused"
			s.retryAfter = 200 * time.Millisecond
		} else {
			op.Unknown, op.Err = true, shortErr(err)
			s.retryAfter = time.Second
		}
		w.h.Done(op)
		return s
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	_ = res.Body.Close()
	if err != nil {
		op.Unknown, op.Err = true, "reading the answer: "+shortErr(err)
		w.h.Done(op)
		s.retryAfter = time.Second
		return s
	}
	op.Status = res.StatusCode
	readAnswer(op, raw)
	if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
		s.retryAfter = min(time.Duration(secs)*time.Second, 3*time.Second)
	}
	w.h.Done(op)
	return s
}

// readAnswer fills in op from the body of its answer: the error code, the
// order and its status, an audit's numbers, a queue status.
func readAnswer(op *Op, raw []byte) {
	var a struct {
		OrderID       string `json:"order_id"`
		Status        string `json:"status"`
		OrderStatus   string `json:"order_status"`
		State         string `json:"state"`
		AdmittedUntil string `json:"admitted_until"`
		Error         struct {
			Code string `json:"code"`
		} `json:"error"`
		Orders         int64  `json:"orders"`
		Units          *int64 `json:"units"`
		RedisRemaining int64  `json:"redis_remaining"`
		Oversold       bool   `json:"oversold"`
	}
	_ = json.Unmarshal(raw, &a)
	op.Code = a.Error.Code
	if a.OrderID != "" {
		op.Order = a.OrderID
	}
	switch {
	case op.Kind == "audit" && op.Status == http.StatusOK:
		op.Detail = fmt.Sprintf("orders=%d redis=%d oversold=%v", a.Orders, a.RedisRemaining, a.Oversold)
		if a.Units != nil {
			op.Detail += fmt.Sprintf(" units=%d", *a.Units)
		}
	case op.Kind == "join" || op.Kind == "queue":
		op.QueueState = a.State
		if t, err := time.Parse(time.RFC3339Nano, a.AdmittedUntil); err == nil && a.State == "admitted" {
			op.AdmittedUntil = t
		}
	case a.OrderStatus != "":
		op.OrderStatus = a.OrderStatus
	case op.Status < 300 && op.Kind != "preload" && op.Kind != "reconcile":
		op.OrderStatus = a.Status
	}
}

func shortErr(err error) string {
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[len(msg)-120:]
	}
	return msg
}
