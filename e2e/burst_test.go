package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Bursts of purchases against service processes: each attempt by a new
// user, transport errors included, and what the answers add up to.

// attempt is one purchase request of a burst and what came of it.
type attempt struct {
	activity, user int64
	sent, answered time.Time
	status         int
	code, orderID  string
	err            error // transport error or an answer that is not JSON
}

// tryBuy sends one purchase and returns what happened, transport errors
// included: the tests here cut the server off on purpose.
func tryBuy(client *http.Client, url string, activity, user int64) attempt {
	a := attempt{activity: activity, user: user, sent: time.Now()}
	a.status, a.code, a.orderID, a.err = post(client, url, activity, user)
	a.answered = time.Now()
	return a
}

func post(client *http.Client, url string, activity, user int64) (status int, code, orderID string, err error) {
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", url, activity), nil)
	req.Header.Set("X-User-ID", strconv.FormatInt(user, 10))
	res, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", "", fmt.Errorf("read %d answer: %w", res.StatusCode, err)
	}
	r := response{status: res.StatusCode, raw: raw}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		return 0, "", "", fmt.Errorf("%d answer is not JSON: %q", res.StatusCode, raw)
	}
	orderID, _ = r.body["order_id"].(string)
	return r.status, r.code(), orderID, nil
}

// burst sends purchases from workers goroutines, each attempt by a new user,
// spread over the activities, until stop is closed; after a transport error
// a worker pauses briefly rather than spin on a dead port.
type burst struct {
	mu       sync.Mutex
	attempts []attempt
	wg       sync.WaitGroup
}

func startBurst(client *http.Client, url string, activities []int64, workers int, firstUser int64, stop <-chan struct{}) *burst {
	return buyers(client, url, activities, workers, firstUser, stop, false)
}

// buyers starts workers that each buy, as a new user every time, one of the
// activities, until stop is closed; with untilSoldOut, a worker also drops an
// activity once it is told sold_out, and stops when none is left.
func buyers(client *http.Client, url string, activities []int64, workers int, firstUser int64, stop <-chan struct{}, untilSoldOut bool) *burst {
	b := &burst{}
	var next atomic.Int64
	next.Store(firstUser)
	for range workers {
		b.wg.Go(func() {
			open := slices.Clone(activities)
			for len(open) > 0 {
				select {
				case <-stop:
					return
				default:
				}
				u := next.Add(1)
				a := tryBuy(client, url, open[int(u)%len(open)], u)
				b.mu.Lock()
				b.attempts = append(b.attempts, a)
				b.mu.Unlock()
				switch {
				case a.err != nil:
					time.Sleep(50 * time.Millisecond)
				case untilSoldOut && a.code == "sold_out":
					open = slices.DeleteFunc(open, func(id int64) bool { return id == a.activity })
				}
			}
		})
	}
	return b
}

// finish waits for the workers and returns every attempt.
func (b *burst) finish() []attempt {
	b.wg.Wait()
	return b.attempts
}

// created returns the orders answered 201 for the activity, as order -> user.
func created(attempts []attempt, activity int64) map[string]int64 {
	m := map[string]int64{}
	for _, a := range attempts {
		if a.err == nil && a.status == http.StatusCreated && a.activity == activity {
			m[a.orderID] = a.user
		}
	}
	return m
}

// summary counts the attempts by answer ("201", an error code, or "error").
func summary(attempts []attempt) map[string]int {
	m := map[string]int{}
	for _, a := range attempts {
		switch {
		case a.err != nil:
			m["error"]++
		case a.status == http.StatusCreated:
			m["201"]++
		default:
			m[a.code]++
		}
	}
	return m
}
