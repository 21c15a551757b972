package purchase

import (
	"runtime"
	"testing"

	"github.com/google/uuid"

	"github.com/seckill-oss/seckill"
)

// The memory of who bought answers every id as it was given, UUID or not,
// keeps the first order of a buyer, and stops at boughtCap.
func TestBoughtMemoryKeepsIdsAsGiven(t *testing.T) {
	var m boughtMemory
	v7 := uuid.Must(uuid.NewV7()).String()
	ids := map[int64]string{1: v7, 2: "order-2", 3: "0190A0B2-7C1D-7E3F-8A4B-5C6D7E8F9A0B", 4: "{" + v7 + "}", 5: ""}
	for u, id := range ids {
		m.remember(seckill.Order{ID: id, ActivityID: 9, UserID: u})
	}
	m.remember(seckill.Order{ID: "later", ActivityID: 9, UserID: 1})
	for u, want := range ids {
		if got, ok := m.orderOf(9, u); !ok || got != want {
			t.Errorf("user %d: %q, %v; want %q", u, got, ok, want)
		}
	}
	if _, ok := m.orderOf(8, 1); ok {
		t.Error("a buyer of activity 9 is remembered in activity 8")
	}
	if n := m.count.Load(); n != int64(len(ids)) {
		t.Errorf("count %d, want %d", n, len(ids))
	}
}

func TestBoughtMemoryBounded(t *testing.T) {
	var m boughtMemory
	for u := range int64(boughtCap + 10) {
		m.remember(seckill.Order{ID: newOrderID(), ActivityID: 1, UserID: u})
	}
	if _, ok := m.orderOf(1, boughtCap+5); ok {
		t.Error("a buyer past boughtCap was remembered")
	}
	if got, ok := m.orderOf(1, boughtCap-1); !ok || len(got) != 36 {
		t.Errorf("the last buyer within boughtCap: %q, %v", got, ok)
	}
}

// BenchmarkBoughtMemoryFull reports the heap a full memory takes a buyer
// (B/buyer): about 80 bytes; the sync.Map of strings took about 190.
//
//	go test -run '^$' -bench BoughtMemoryFull -benchtime 3x ./internal/purchase
func BenchmarkBoughtMemoryFull(b *testing.B) {
	for range b.N {
		var m boughtMemory
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for u := range int64(boughtCap) {
			m.remember(seckill.Order{ID: newOrderID(), ActivityID: 1, UserID: u})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/boughtCap, "B/buyer")
		runtime.KeepAlive(&m)
	}
}
