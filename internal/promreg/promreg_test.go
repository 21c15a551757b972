package promreg_test

import (
	"bytes"
	"log/slog"
	"strings"
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

// A second instance's collectors are the first's; a clash of names is
// logged, and the clashing collector still counts, unregistered.
func TestRegistrarSharesAndLogsAClash(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	first := promreg.NewRegistrar(reg, log).Counter("y_total", "y")
	second := promreg.NewRegistrar(reg, log).Counter("y_total", "y")
	if second != first {
		t.Error("a second instance's collector was not shared")
	}
	if logged.Len() != 0 {
		t.Errorf("a shared collector was logged: %s", logged.String())
	}
	clash := promreg.NewRegistrar(reg, log).CounterVec("y_total", "y", "a")
	clash.WithLabelValues("x").Inc()
	if !strings.Contains(logged.String(), "not registered") {
		t.Errorf("a clash was not logged: %q", logged.String())
	}
	none := promreg.NewRegistrar(nil, log).CounterVec("y_total", "y", "a")
	promreg.Zero(none.MetricVec, "b")
	series := make(chan prometheus.Metric, 4)
	none.Collect(series)
	if n := len(series); n != 1 {
		t.Errorf("a nil registry's vector has %d series, want the zeroed 1", n)
	}
}
