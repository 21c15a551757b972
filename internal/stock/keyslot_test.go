package stock_test

import (
	"testing"

	"github.com/seckill-oss/seckill/internal/keys"
)

func TestKeysShareTheActivitySlot(t *testing.T) {
	if got, want := keys.NewSpace("p:").Stock(42), "p:seckill:{act:42}:stock"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	if got, want := keys.NewSpace("p:").Lock(42), "p:seckill:{act:42}:lock"; got != want {
		t.Errorf("LockKey = %q, want %q", got, want)
	}
}
