package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// waitQueue is a Queue that holds queue/mine?wait for the wait it is
// given, and counts the holds.
type waitQueue struct {
	joinQueue
	held  atomic.Int64
	asked atomic.Int64 // the last wait asked, in ns
}

func (q *waitQueue) MineWait(ctx context.Context, activityID, userID int64, wait time.Duration) (seckill.QueueStatus, error) {
	q.held.Add(1)
	q.asked.Store(int64(wait))
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		return seckill.QueueStatus{}, ctx.Err()
	}
	return q.Mine(ctx, activityID, userID)
}

// ?wait= is an integer from 1 to 30, given once: anything else is 400
// invalid_request and nothing is held; without it nothing is held.
// Can fail: with strconv.Atoi's answer taken without the range, wait=0
// and wait=31 are held (and 0 answered at once as 200).
func TestWaitOutOfRangeIsRefused(t *testing.T) {
	q := &waitQueue{}
	h := NewServer(Config{}, withParts(Deps{Service: newFake(), Queue: q}))
	for _, bad := range []string{"wait=0", "wait=31", "wait=abc", "wait=", "wait=-1", "wait=1.5", "wait=1&wait=2", "wait=1e1", "wait=%201"} {
		rec := serve(h, request{"GET", "/api/v1/activities/1/queue/mine?" + bad, "", user("7")})
		checkError(t, rec, http.StatusBadRequest, seckill.EInvalid)
	}
	if n := q.held.Load(); n != 0 {
		t.Errorf("%d requests with a bad wait were held", n)
	}
	if rec := serve(h, request{"GET", "/api/v1/activities/1/queue/mine", "", user("7")}); rec.Code != http.StatusOK || q.held.Load() != 0 {
		t.Errorf("without wait: %d, %d held; want 200 at once", rec.Code, q.held.Load())
	}
	rec := serve(h, request{"GET", "/api/v1/activities/1/queue/mine?wait=1", "", user("7")})
	if rec.Code != http.StatusOK || q.held.Load() != 1 || time.Duration(q.asked.Load()) != time.Second {
		t.Errorf("wait=1: %d, %d held for %v; want 200 held 1 s", rec.Code, q.held.Load(), time.Duration(q.asked.Load()))
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("a held answer's Cache-Control %q, want no-store", cc)
	}
}

// A held answer comes after the server's own read and write timeouts have
// passed, over HTTP/1.1 and over HTTP/2 without TLS (a gateway's upstream):
// the hold extends its connection's (or stream's) deadlines, as the read
// timeout would otherwise cancel the request while it waits and the write
// timeout cut its answer.
// Can fail: without extendDeadlines, the request's context is cancelled at
// the read timeout and the client gets no answer (EOF, or a reset stream).
func TestHeldAnswerOutlastsTheServerTimeouts(t *testing.T) {
	for _, h2c := range []bool{false, true} {
		q := &waitQueue{}
		srv := httptest.NewUnstartedServer(NewServer(Config{}, withParts(Deps{Service: newFake(), Queue: q})))
		srv.Config.ReadTimeout, srv.Config.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
		client := &http.Client{}
		if h2c {
			if err := ServeH2C(srv.Config); err != nil {
				t.Fatal(err)
			}
			var cp http.Protocols
			cp.SetUnencryptedHTTP2(true)
			client.Transport = &http.Transport{Protocols: &cp}
		}
		srv.Start()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/activities/1/queue/mine?wait=1", nil)
		req.Header.Set("X-User-ID", "7")
		res, err := client.Do(req)
		if err != nil {
			t.Errorf("h2c %v: held 1 s behind 300 ms timeouts: %v", h2c, err)
			srv.Close()
			continue
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK || res.ProtoMajor != map[bool]int{false: 1, true: 2}[h2c] {
			t.Errorf("h2c %v: held 1 s behind 300 ms timeouts: HTTP/%d %d %s", h2c, res.ProtoMajor, res.StatusCode, body)
		}
		srv.Close()
	}
}
