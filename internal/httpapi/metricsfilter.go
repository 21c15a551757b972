package httpapi

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// hiddenActivityCheck is how long a scrape may spend asking which
// activities buyers may see.
const hiddenActivityCheck = 2 * time.Second

// hidingGatherer serves /metrics without the series of an activity buyers
// may not see (an unannounced one before its start, docs/API.md "Secure
// defaults"): its stock and queue would tell anyone who scrapes what is
// coming. An activity is shown as Service.BuyerActivity shows it; when that
// fails (the database down) its series are hidden too, never shown.
type hidingGatherer struct {
	prometheus.Gatherer
	svc Service
}

// Gather implements prometheus.Gatherer.
func (h hidingGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := h.Gatherer.Gather()
	if h.svc == nil {
		return mfs, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), hiddenActivityCheck)
	defer cancel()
	visible := map[string]bool{}
	shown := func(id string) bool {
		v, ok := visible[id]
		if !ok {
			n, perr := strconv.ParseInt(id, 10, 64)
			_, aerr := h.svc.BuyerActivity(ctx, n)
			v = perr == nil && aerr == nil
			visible[id] = v
		}
		return v
	}
	kept := mfs[:0]
	for _, mf := range mfs {
		series := mf.Metric[:0]
		for _, m := range mf.Metric {
			if id, ok := activityLabel(m); !ok || shown(id) {
				series = append(series, m)
			}
		}
		if mf.Metric = series; len(series) > 0 {
			kept = append(kept, mf)
		}
	}
	return kept, err
}

// activityLabel is the series' activity_id label, if it has one.
func activityLabel(m *dto.Metric) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == "activity_id" {
			return l.GetValue(), true
		}
	}
	return "", false
}
