package order

import (
	"errors"
	"testing"
)

func TestSetMaxConns(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		if err := s.SetMaxConns(0); !errors.Is(err, ErrPoolSize) {
			t.Fatalf("SetMaxConns(0) = %v, want ErrPoolSize", err)
		}
		if err := s.SetMaxConns(40); err != nil {
			t.Fatal(err)
		}
		want := 40
		if !s.dialect.resizablePool {
			want = 1 // the embedded database keeps its one connection
		}
		if got := s.MaxConns(); got != want {
			t.Errorf("MaxConns = %d, want %d", got, want)
		}
	})
}
