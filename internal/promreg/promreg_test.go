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

func TestRegistrarSharesAndKeepsTheFirstError(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := prometheus.NewCounter(prometheus.CounterOpts{Name: "y_total", Help: "y"})
	r := promreg.NewRegistrar(reg)
	promreg.Add(r, &first)
	second := prometheus.NewCounter(prometheus.CounterOpts{Name: "y_total", Help: "y"})
	clash := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "y_total", Help: "y"}, []string{"a"})
	r2 := promreg.NewRegistrar(reg)
	promreg.Add(r2, &second)
	if second != first {
		t.Error("a second instance's collector was not shared")
	}
	promreg.Add(r2, &clash)
	if r2.Err() == nil || r.Err() != nil {
		t.Errorf("errors: %v, %v; want the clash kept by the second registrar only", r.Err(), r2.Err())
	}
	none := promreg.NewRegistrar(nil)
	promreg.Add(none, &clash)
	if none.Err() != nil {
		t.Errorf("a nil registry: %v", none.Err())
	}
}
