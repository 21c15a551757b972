package main

import (
	"fmt"
	"io"
	"os"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape is one reading of the service's /metrics, by family name.
type scrape map[string]*dto.MetricFamily

func parseScrape(in io.Reader) (scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(in)
	if err != nil {
		return nil, fmt.Errorf("parse the metrics: %w", err)
	}
	return fams, nil
}

func readScrape(path string) (scrape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the metrics: %w", err)
	}
	defer f.Close()
	s, err := parseScrape(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// totals is a histogram's running sum and count of observations.
type totals struct{ sum, count float64 }

// histogram is the totals of the histogram name's series whose label has
// the value value ("" and "": the series without labels); zero when the
// series has no observation yet (a vector shows no series until then).
func (s scrape) histogram(name, label, value string) totals {
	fam := s[name]
	if fam == nil {
		return totals{}
	}
	for _, m := range fam.GetMetric() {
		if label != "" && labelValue(m, label) != value {
			continue
		}
		h := m.GetHistogram()
		return totals{sum: h.GetSampleSum(), count: float64(h.GetSampleCount())}
	}
	return totals{}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// value is the value of the first series of a gauge, counter or untyped
// family, and whether there is one.
func (s scrape) value(name string) (float64, bool) {
	fam := s[name]
	if fam == nil || len(fam.GetMetric()) == 0 {
		return 0, false
	}
	m := fam.GetMetric()[0]
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// printValue prints the value of the metric name read from in, or nothing
// when the scrape does not hold it (run.sh leaves that sample's cell empty).
func printValue(name string, in io.Reader, out io.Writer) error {
	s, err := parseScrape(in)
	if err != nil {
		return err
	}
	if v, ok := s.value(name); ok {
		_, err = fmt.Fprintln(out, model.SampleValue(v))
	}
	return err
}
