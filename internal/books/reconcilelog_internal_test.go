package books

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/seckill-oss/seckill"
)

// The reconcile log says null, as the API does, when Redis held no stock.
func TestReconcileLogsNullBefore(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("stock reconciled", "before", seckill.Reconciliation{Before: -1}.LoadedBefore())
	if !strings.Contains(buf.String(), `"before":null`) {
		t.Errorf("log %s, want before:null", buf.String())
	}
}
