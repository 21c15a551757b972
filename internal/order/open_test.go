package order

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{testenv.MySQLDSN(t), "sqlite:" + filepath.Join(t.TempDir(), "m.db")} {
		for range 2 {
			if err := Migrate(ctx, dsn); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Open(ctx, dsn, Options{})
		if err != nil {
			t.Fatal(err)
		}
		newActivity(t, s, 1)
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestOpenRejectsBadDSN(t *testing.T) {
	for _, dsn := range []string{"sqlite:", "sqlite:/tmp/x.db?mode=ro", "not a dsn"} {
		if s, err := Open(context.Background(), dsn, Options{}); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
}
