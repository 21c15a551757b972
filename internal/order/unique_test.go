package order

import (
	"errors"
	"testing"
)

// TestOneOrderPerUser also shows that a refused insert gives back the unit and
// the fence its transaction had claimed.
func TestOneOrderPerUser(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a := newActivity(t, s, 2)
		if err := buy(s, a.ID, 1, 1, ""); err != nil {
			t.Fatal(err)
		}
		if err := buy(s, a.ID, 1, 2, ""); !errors.Is(err, errDuplicate) {
			t.Fatalf("second order of user 1: %v, want errDuplicate", err)
		}
		// Fence 2 is still free and the second unit still unsold.
		if err := buy(s, a.ID, 2, 2, ""); err != nil {
			t.Fatalf("user 2 after the refused duplicate: %v", err)
		}
		if err := buy(s, a.ID, 3, 3, ""); !errors.Is(err, errSoldOut) {
			t.Errorf("third unit of two: %v, want errSoldOut", err)
		}
		if n := count(t, s, a.ID); n != 2 {
			t.Errorf("CountOrders = %d, want 2", n)
		}
	})
}

func TestIdempotencyKeyUniquePerUser(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		a, b := newActivity(t, s, 10), newActivity(t, s, 10)
		steps := []struct {
			activity, user, fence int64
			key                   string
			want                  error
		}{
			{a.ID, 1, 1, "k", nil},
			{b.ID, 1, 1, "k", errKeyUsed}, // same user, same key, other order
			{a.ID, 2, 2, "k", nil},        // keys are per user
			{b.ID, 1, 1, "K", nil},        // keys are case-sensitive
			{a.ID, 3, 3, "", nil},         // no key, twice: NULLs do not collide
			{a.ID, 4, 4, "", nil},
		}
		for i, st := range steps {
			if err := buy(s, st.activity, st.user, st.fence, st.key); !errors.Is(err, st.want) {
				t.Errorf("step %d (user %d, key %q): %v, want %v", i, st.user, st.key, err, st.want)
			}
		}
		if n := count(t, s, a.ID) + count(t, s, b.ID); n != 5 {
			t.Errorf("%d orders, want 5", n)
		}
	})
}
