package purchase

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/internal/waitingroom"
)

// One admission never holds two deducted units. A room of 2 units admits
// users 1 and 2. User 1's batch deducts a unit, its COMMIT fails and the
// database stays unreachable for the look-up: 503 outcome_unknown, the unit
// stays deducted, the admission stays open (a 503 is not final). A retry
// while the database still cannot tell is outcome_unknown again, and takes
// no unit. The database comes back (the order had not committed) and user 1 retries,
// then user 2 buys: both get an order, and no unit is left deducted for
// nothing.
// Can fail: without the earlier outcome resolved before the retry, the
// retry takes a second unit for user 1's one admission, the last one, and
// user 2, admitted, is told sold_out until the books sweep repairs Redis.
func TestOutcomeUnknownRetryTakesNoSecondUnit(t *testing.T) {
	s, p, a := roomFixture(t, 2)
	ctx := context.Background()
	admitUser(t, s, a.ID, 1)
	admitUser(t, s, a.ID, 2)

	if _, err := s.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 3}); codeOf(err) != seckill.ENotAdmitted { // and the activity is cached
		t.Fatalf("user 3, not admitted: %v, want not_admitted", err)
	}

	q, sl := deductedSale(t, s, a, 1)
	if err := p.SetDown(true); err != nil { // the COMMIT is cut, and the look-up after it
		t.Fatal(err)
	}
	sl.resolveCommit(order.ErrCommitUnknown)
	sl.finishAdmissions()
	if _, err := s.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 1}); codeOf(err) != seckill.EOutcomeUnknown {
		t.Errorf("user 1 retries while the database still cannot tell: %v, want outcome_unknown", err)
	}
	if left, err := s.stock.Remaining(ctx, a.ID); err != nil || left != 1 {
		t.Errorf("remaining %d, %v after that retry: want 1, no second unit taken", left, err)
	}
	if err := p.SetDown(false); err != nil {
		t.Fatal(err)
	}
	s.sell.endTenure(q)
	if c := codeOf(sl.b.outs[0].err); c != seckill.EOutcomeUnknown {
		t.Fatalf("user 1's first attempt: %v, want outcome_unknown", sl.b.outs[0].err)
	}

	if _, err := s.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 1}); err != nil {
		t.Fatalf("user 1 retries once the database is back: %v (%s), want an order", err, codeOf(err))
	}
	if _, err := s.Buy(ctx, seckill.BuyRequest{ActivityID: a.ID, UserID: 2}); err != nil {
		t.Errorf("user 2, admitted, buys: %v (%s), want an order", err, codeOf(err))
	}
	left, err := s.stock.Remaining(ctx, a.ID)
	if err != nil || left != 0 {
		t.Errorf("remaining %d, %v: want 0, one unit for each of the two orders", left, err)
	}
	if n, err := s.orders.Orders.CountOrders(ctx, a.ID); err != nil || n != 2 {
		t.Errorf("%d orders, %v: want 2", n, err)
	}
}

// deductedSale is one batch of the user alone, granted and deducted, its
// orders not yet written.
func deductedSale(t *testing.T, s *Service, a seckill.Activity, userID int64) (*queue, *deductedBatch) {
	t.Helper()
	q := &queue{activity: a}
	b := newBatch(a, []*ticket{newTicket(seckill.BuyRequest{ActivityID: a.ID, UserID: userID})})
	g, in, said := s.sell.lock(q, b, b.all())
	if in = b.record(in, said); len(in) == 0 {
		t.Fatalf("user %d's batch: no grant: %v", userID, b.outs[0].err)
	}
	d, in, said := s.sell.deduct(g, b, in)
	if in = b.record(in, said); len(in) == 0 || len(d.orders) != 1 {
		t.Fatalf("user %d's deduct: %v", userID, b.outs[0].err)
	}
	return q, &deductedBatch{s: s, b: b, in: in, g: g, d: d}
}

// deductedBatch is a batch past its deduct, whose write a test fails by
// hand: each method runs what the pipeline runs after such a write.
type deductedBatch struct {
	s  *Service
	b  *batch
	in []int // the deducted buyers, one per order of d
	g  grant
	d  deducted
}

// resolveCommit resolves the batch as after a COMMIT of unknown outcome,
// records the answers and settles.
func (x *deductedBatch) resolveCommit(cause error) {
	outs, st := x.s.sell.resolve(x.g.lease, x.b.activity, x.g.stock, x.d, cause)
	x.b.record(nil, answersAt(x.in, outs))
	x.s.sell.settle(x.g.lease, x.b.activity, x.g.stock, x.d, st)
}

// afterFailedWrite answers the batch as after a failed write, and settles.
func (x *deductedBatch) afterFailedWrite(err error) {
	outs, st := x.s.sell.afterFailedWrite(x.g, x.b.activity, x.d, err)
	x.b.record(nil, answersAt(x.in, outs))
	x.s.sell.settle(x.g.lease, x.b.activity, x.g.stock, x.d, st)
}

// finishAdmissions uses up the admissions of the batch's final answers.
func (x *deductedBatch) finishAdmissions() { x.s.sell.finishAdmissions(x.b) }

// roomFixture is a service with waiting rooms on the real Redis and on
// MariaDB reached through a fault proxy, and an activity of total units
// with its room open and its stock loaded.
func roomFixture(t *testing.T, total int64) (*Service, *toxic.Proxy, seckill.Activity) {
	t.Helper()
	cfg, p := testenv.ProxiedMySQL(t, testenv.MySQLConfig(t, testenv.MySQLDSN(t)))
	cfg.Timeout = 300 * time.Millisecond
	s := roomInstanceOn(t, cfg, testenv.Prefix(t), time.Second, nil)
	return s, p, openRoom(t, s, total)
}

// roomInstanceOn is a service instance with waiting rooms on the real
// Redis, under prefix, and the database cfg names, with a lease of lockTTL
// and the verifier users (nil: approve all).
func roomInstanceOn(t *testing.T, cfg *mysql.Config, prefix string, lockTTL time.Duration, users usercheck.Verifier) *Service {
	t.Helper()
	orders, err := order.Open(context.Background(), cfg.FormatDSN(), order.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orders.Close() })
	rdb := testenv.Redis(t)
	locks := lock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	if users == nil {
		users = usercheck.ApproveAll{}
	}
	rooms, err := waitingroom.New(waitingroom.Config{}, waitingroom.Deps{Store: waitingroom.NewStore(rdb, keys.NewSpace(prefix), 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Lease: lock.Policy{TTL: lockTTL, CallTimeout: lockTTL / 2}},
		Deps{Locks: locks, Stock: stock.New(rdb, keys.NewSpace(prefix)), Orders: orders, Catalog: catalog.New(orders, nil), Users: users, Rooms: rooms})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	serviceRedis.Store(s, rdb)
	return s
}

// openRoom creates an activity of total units with a waiting room, opens
// the room and loads the stock.
func openRoom(t *testing.T, s *Service, total int64) seckill.Activity {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	a, err := s.orders.Activities.CreateActivity(ctx, seckill.Activity{Name: "room", TotalStock: total, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	w := waitingroom.Window{OpensAt: a.WaitingRoom.OpensAt, StartsAt: a.StartsAt, EndsAt: a.EndsAt, Seed: a.WaitingRoom.Seed}
	if err := waitingroom.NewStore(redisOf(s), s.stock.Keys(), 0, 0).Open(ctx, a.ID, w); err != nil {
		t.Fatal(err)
	}
	if err := s.stock.Load(ctx, a.ID, total, 1); err != nil {
		t.Fatal(err)
	}
	return a
}

// codeOf is the contract's code of err, "" when it has none.
func codeOf(err error) string {
	if e, ok := errors.AsType[*seckill.Error](err); ok {
		return e.Code
	}
	return ""
}

// admitUser gives the user an open admission of a minute, as the room's
// step would.
func admitUser(t *testing.T, s *Service, activityID, userID int64) {
	t.Helper()
	until := float64(time.Now().Add(time.Minute).UnixMilli())
	z := redis.Z{Score: until, Member: strconv.FormatInt(userID, 10)}
	if err := redisOf(s).ZAdd(context.Background(), s.stock.Keys().WaitingAdmitted(activityID), z).Err(); err != nil {
		t.Fatal(err)
	}
}
