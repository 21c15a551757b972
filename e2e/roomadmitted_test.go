package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// Admitted buyers in the waiting room, end to end: an admission holds a
// unit, across a killed instance and a Redis failover.

// tryJoin joins the queue, reporting a transport error instead of failing
// the test.
func tryJoin(client *http.Client, url string, activity, user int64) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/activities/%d/queue", url, activity), nil)
	req.Header.Set("X-User-ID", strconv.FormatInt(user, 10))
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_ = res.Body.Close()
	return res.StatusCode, nil
}

// tryMine is queue/mine that reports a transport error instead of failing
// the test: for instances that may be killed.
func tryMine(client *http.Client, url string, activity, user int64) (queueStatus, error) {
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/v1/activities/%d/queue/mine", url, activity), nil)
	req.Header.Set("X-User-ID", strconv.FormatInt(user, 10))
	res, err := client.Do(req)
	if err != nil {
		return queueStatus{}, err
	}
	defer res.Body.Close()
	var body struct {
		State string `json:"state"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return queueStatus{}, err
	}
	return queueStatus{status: res.StatusCode, state: body.State, code: body.Error.Code}, nil
}

// TestAdmittedBuyersNeverHearSoldOut: 300 users for 60 units through two
// instances that both admit, admissions of 3 s, a quarter of the admitted
// never buying (their admissions lapse and go on); halfway one instance is
// killed. No admitted buyer hears sold_out, and every unit is sold.
// Can fail: with admissions not counted against the units left (admit.lua
// admitting up to the units left), admitted buyers are told sold_out
// ("admitted user 242 told sold_out"). The deduct's own check of the
// admission is shown by waitingroom's TestAdmissionsHoldTheirUnits.
func TestAdmittedBuyersNeverHearSoldOut(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{})
	instances, procs := startInstances(t, s, 2, s.processEnv(admittedSaleEnv))
	admittedSale(t, s, instances, func() { procs[1].signal(syscall.SIGKILL) })
}

// TestAdmittedBuyersNeverHearSoldOutAcrossAFailover: the same sale on a
// Sentinel-managed Redis whose primary is killed halfway; the instances
// WAIT for the replica (SECKILL_REDIS_WAIT_REPLICAS), as a deployment that
// needs the guarantee across a failover must.
// Can fail: as TestAdmittedBuyersNeverHearSoldOut.
func TestAdmittedBuyersNeverHearSoldOutAcrossAFailover(t *testing.T) {
	s := topologyStack(t, "sentinel")
	pid := serverPID(t, s.rdb.(*redis.Client))
	restored := false
	t.Cleanup(func() {
		if !restored {
			restartTopology(t, "sentinel")
		}
	})
	env := map[string]string{"SECKILL_REDIS_WAIT_REPLICAS": "1", "SECKILL_REDIS_WAIT_TIMEOUT": "200ms"}
	for k, v := range admittedSaleEnv {
		env[k] = v
	}
	instances, _ := startInstances(t, s, 2, s.topologyEnv(env))
	var restarting sync.WaitGroup
	admittedSale(t, s, instances, func() {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill the primary: %v", err)
		}
		t.Logf("SIGKILL to the Redis primary (pid %d) halfway through the sale", pid)
		// Until the dead node is back as the new primary's replica, the
		// WAIT for one replica refuses every write: nothing is sold, and
		// admissions lapse (their buyers join again). Ops bring it back.
		restarting.Go(func() {
			time.Sleep(3 * time.Second)
			restartTopology(t, "sentinel")
		})
	})
	restarting.Wait()
	restored = true
}

// admittedSaleEnv is the instances' environment for admittedSale.
var admittedSaleEnv = map[string]string{
	"SECKILL_ADMISSION_TTL": "3s",
	// A unit left in transit by a killed instance or a failover comes back.
	"SECKILL_BOOKS_SWEEP": "1s",
}

// admittedSale runs 300 users for 60 units through the instances: each
// polls, and buys when admitted, but a quarter of them let their admission
// lapse (the others join again if theirs lapses). halfway runs when half the units are sold; afterwards the users
// of the second instance go to the first. It fails on an admitted buyer
// told sold_out, a user not final after 90 s, or a unit not sold.
func admittedSale(t *testing.T, s *stack, instances []*stack, halfway func()) {
	const (
		users = 300
		units = 60
	)
	act, startsAt := s.createRoom(units, 2*time.Second)
	for u := int64(1); u <= users; u++ {
		if q := instances[u%2].queue(http.MethodPost, act, u); q.status != http.StatusOK {
			t.Fatalf("user %d joins: %d %s", u, q.status, q.code)
		}
	}
	time.Sleep(time.Until(startsAt))

	var sold, soldOutAdmitted atomic.Int64
	var half atomic.Bool
	var statesMu sync.Mutex
	states := map[string]int{}
	last := map[int64]string{} // each user's last state seen, for a failure
	live := func(u int64) *stack {
		if half.Load() {
			return instances[0]
		}
		return instances[u%2]
	}
	all := make([]int64, 0, users)
	for u := int64(1); u <= users; u++ {
		all = append(all, u)
	}
	pending := rounds(all, 16, 100*time.Millisecond, time.Now().Add(90*time.Second), func(u int64) bool {
		in := live(u)
		q, err := tryMine(s.client, in.url, act, u)
		final := err == nil && q.status == http.StatusOK && (q.state == "done" || q.state == "closed" || (q.state == "lapsed" && u%4 == 0))
		end := q.state + " " + q.code
		if err == nil && q.state == "lapsed" && u%4 != 0 {
			// A buyer whose admission ran out (the sale stalled
			// under them) joins again, as the app would. Once the room
			// has closed, the join is refused (409 sold_out): final.
			status, jerr := tryJoin(s.client, in.url, act, u)
			statesMu.Lock()
			states["rejoined"]++
			statesMu.Unlock()
			if jerr == nil && status == http.StatusConflict {
				final, end = true, "lapsed, join refused"
			}
		}
		statesMu.Lock()
		if final {
			states[end]++
		}
		last[u] = end
		statesMu.Unlock()
		if err == nil && q.status == http.StatusOK && q.state == "admitted" && u%4 != 0 {
			status, code, _, err := post(s.client, in.url, act, u)
			switch {
			case err != nil:
			case status == http.StatusCreated:
				if sold.Add(1) == units/2 && half.CompareAndSwap(false, true) {
					halfway()
				}
			case code == "sold_out":
				soldOutAdmitted.Add(1)
				t.Errorf("admitted user %d told sold_out", u)
			}
		}
		return final
	})
	if len(pending) > 0 {
		statesMu.Lock()
		t.Errorf("%d users not final after 90 s, e.g. %d (last seen %q)", len(pending), pending[0], last[pending[0]])
		statesMu.Unlock()
	}
	if !half.Load() {
		t.Error("the sale never reached half")
	}
	var orders int64
	if err := s.db.QueryRow("SELECT COUNT(*) FROM orders WHERE activity_id = ?", act).Scan(&orders); err != nil {
		t.Fatal(err)
	}
	t.Logf("orders %d of %d; 201s seen %d; admitted told sold_out %d; users' ends %v", orders, units, sold.Load(), soldOutAdmitted.Load(), states)
	if orders != units {
		t.Errorf("%d orders, want every unit (%d) sold", orders, units)
	}
	s.checkBooksDirect(act, units, nil)
}
