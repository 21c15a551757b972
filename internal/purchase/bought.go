package purchase

import (
	"sync"
	"sync/atomic"

	"github.com/seckill-oss/seckill"
)

// boughtCap bounds the in-process memory of who bought what: about 300 bytes
// of heap a buyer (the soak measured RSS growing by that much per order), so
// at most about 40 MB. Past it, a repeat buyer queues and the database's
// unique key answers instead.
const boughtCap = 1 << 17

// boughtMemory remembers this process's orders, so a buyer who asks again is
// answered without queueing. The database's unique key is the guarantee;
// this is only a shortcut.
type boughtMemory struct {
	orders sync.Map // buyer -> order id
	count  atomic.Int64
}

type buyer struct{ activityID, userID int64 }

// remember records o, unless the memory is full.
func (m *boughtMemory) remember(o seckill.Order) {
	if m.count.Load() >= boughtCap {
		return
	}
	if _, loaded := m.orders.LoadOrStore(buyer{o.ActivityID, o.UserID}, o.ID); !loaded {
		m.count.Add(1)
	}
}

// orderOf returns the id of the order this process saw the user buy in the
// activity, if it did.
func (m *boughtMemory) orderOf(activityID, userID int64) (string, bool) {
	id, ok := m.orders.Load(buyer{activityID, userID})
	if !ok {
		return "", false
	}
	return id.(string), true
}
