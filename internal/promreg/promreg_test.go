package promreg_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill-oss/seckill/internal/promreg"
)

func TestRegisterSharesAndRefuses(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "x_total", Help: "x"}
	first, err := promreg.Register(reg, prometheus.NewCounter(opts))
	if err != nil {
		t.Fatal(err)
	}
	second, err := promreg.Register(reg, prometheus.NewCounter(opts))
	if err != nil || second != first {
		t.Errorf("second registration: %v, %v; want the first collector", second, err)
	}
	// The same name with other labels is a conflict, not a share.
	if _, err := promreg.Register(reg, prometheus.NewCounterVec(opts, []string{"a"})); err == nil {
		t.Error("a conflicting collector was accepted")
	}
}
