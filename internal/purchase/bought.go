package purchase

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/seckill-oss/seckill"
)

// boughtCap bounds the in-process memory of who bought what: about 80 bytes
// of heap a buyer whose order id is a UUID, as every id this service makes
// is, so at most about 10 MB. Past it, a repeat buyer queues and the
// database's unique key answers instead.
const boughtCap = 1 << 17

// boughtShards spreads the memory over locks of its own, so buyers asking
// and batches remembering rarely wait for one another (a power of two: a
// buyer's shard is the low bits of its ids).
const boughtShards = 32

// boughtMemory remembers this process's orders, so a buyer who asks again is
// answered without queueing. The database's unique key is the guarantee;
// this is only a shortcut. The zero value is empty and ready.
//
// An order id that is a UUID in its canonical form is kept as its 16 bytes
// (as strings in a sync.Map, about 190 bytes a buyer, 131,072 buyers were
// 25 MB of live heap, twice that in RSS); any other id is kept as it is.
type boughtMemory struct {
	shards [boughtShards]boughtShard
	count  atomic.Int64
}

type boughtShard struct {
	mu    sync.RWMutex
	uuids map[buyer]uuid.UUID
	other map[buyer]string // ids that are not canonical UUIDs
}

type buyer struct{ activityID, userID int64 }

func (m *boughtMemory) shard(b buyer) *boughtShard {
	return &m.shards[(b.userID^b.activityID)&(boughtShards-1)]
}

// remember records o, unless the memory is full.
func (m *boughtMemory) remember(o seckill.Order) {
	if m.count.Load() >= boughtCap {
		return
	}
	b := buyer{o.ActivityID, o.UserID}
	sh := m.shard(b)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.uuids[b]; ok {
		return
	}
	if _, ok := sh.other[b]; ok {
		return
	}
	if id, ok := canonicalUUID(o.ID); ok {
		if sh.uuids == nil {
			sh.uuids = make(map[buyer]uuid.UUID)
		}
		sh.uuids[b] = id
	} else {
		if sh.other == nil {
			sh.other = make(map[buyer]string)
		}
		sh.other[b] = o.ID
	}
	m.count.Add(1)
}

// canonicalUUID parses id when it is a UUID in its canonical form (36
// characters, lower-case hex), the one form whose 16 bytes give id back
// (uuid.UUID.String). Checked without formatting the id again: remember runs
// for every order written.
func canonicalUUID(id string) (uuid.UUID, bool) {
	if len(id) != 36 || strings.ToLower(id) != id {
		return uuid.UUID{}, false
	}
	u, err := uuid.Parse(id)
	return u, err == nil
}

// orderOf returns the id of the order this process saw the user buy in the
// activity, if it did.
func (m *boughtMemory) orderOf(activityID, userID int64) (string, bool) {
	b := buyer{activityID, userID}
	sh := m.shard(b)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if id, ok := sh.uuids[b]; ok {
		return id.String(), true
	}
	id, ok := sh.other[b]
	return id, ok
}
