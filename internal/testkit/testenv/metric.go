package testenv

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric sums the series of the metric name in g whose labels include every
// pair of labels (nil: all its series): a counter's or gauge's value, a
// histogram's sample count. It fails the test when no series matches.
func Metric(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	matched := false
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			matched = true
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Histogram != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	if !matched {
		t.Fatalf("no series %s%v", name, labels)
	}
	return sum
}
