package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v4"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// The files whose queries must name metrics the service exports.
const (
	dashboardFile = "../../deploy/grafana/seckill.json"
	alertsFile    = "../../deploy/prometheus/alerts.yml"
)

// fromPrometheus are series Prometheus makes itself, not the service.
var fromPrometheus = []string{"up"}

// TestDashboardMetricsExist runs the service on the real Redis and MariaDB,
// with the verification stub, drives it through a small sale (a sold-out
// answer, an audit, a purchase against stock that is not loaded), scrapes
// /metrics and fails for every metric a Grafana panel or an alert rule asks
// for that the scrape does not have.
func TestDashboardMetricsExist(t *testing.T) {
	queries := dashboardQueries(t)
	queries = append(queries, alertQueries(t)...)
	if len(queries) < 20 {
		t.Fatalf("found only %d queries in %s and %s", len(queries), dashboardFile, alertsFile)
	}

	env := realEnv(t, 0)
	// Payments on, so the payment panels' metrics are exported.
	pay := start(t, nil, "paystub", "-addr", "127.0.0.1:0", "-merchant-id", "m-dashboard")
	env["SECKILL_PAYMENT_URL"] = "http://" + pay.addr()
	env["SECKILL_PAYMENT_SECRET"] = "dashboard-test-secret-0123456789"
	env["SECKILL_PAYMENT_MERCHANT_ID"] = "m-dashboard"
	// Admissions lapse after a second, so the waiting room below admits
	// one buyer a second while others wait.
	env["SECKILL_ADMISSION_TTL"] = "1s"
	p := start(t, env, "serve")
	base := "http://" + p.addr()
	admin := map[string]string{"Authorization": "Bearer " + env["SECKILL_ADMIN_TOKEN"]}
	// First, as the waiting room's ETA gauge appears only after a room
	// had places waiting for one ETA window (10 s): the rest runs meanwhile.
	room := startWaitingRoom(t, base, admin)
	id := createAndPreload(t, base, admin, 1)
	// A counter that appears only with its first event misses that event in
	// increase(): it must be there, at 0, before anything failed.
	_, early := getText(t, base+"/metrics")
	if !strings.Contains(early, fmt.Sprintf(`seckill_stock_not_loaded_total{activity_id="%d"} 0`, id)) {
		t.Errorf("seckill_stock_not_loaded_total of activity %d is not exported at 0 before the first refusal", id)
	}
	for user := 1; user <= 2; user++ {
		call(t, "POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id), map[string]string{"X-User-ID": fmt.Sprint(user)}, "")
	}
	if code, _ := call(t, "GET", fmt.Sprintf("%s/admin/v1/activities/%d/audit", base, id), admin, ""); code != http.StatusOK {
		t.Fatalf("audit: %d", code)
	}
	other := createAndPreload(t, base, admin, 1)
	testenv.Redis(t).Del(context.Background(), keys.NewSpace(env["SECKILL_KEY_PREFIX"]).Stock(other))
	if code, v := call(t, "POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", base, other), map[string]string{"X-User-ID": "3"}, ""); code != http.StatusServiceUnavailable {
		t.Fatalf("purchase with the stock gone from Redis: %d %v, want 503", code, v)
	}

	text := waitForMetric(t, base, fmt.Sprintf(`seckill_waiting_room_eta_error_ratio{activity_id="%d"}`, room), 30*time.Second)
	exported := scrapeFamilies(t, text)
	for _, q := range queries {
		for _, name := range missingMetrics(t, q, exported) {
			t.Errorf("%s: %s uses %s, which /metrics does not export", q.file, q.what, name)
		}
	}
}

// startWaitingRoom creates an activity on sale with a waiting room and one
// unit, and a line of buyers who do not buy: with SECKILL_ADMISSION_TTL=1s
// the admitter admits one a second while the others wait, so every
// waiting-room metric gets its activity's series, the ETA error too (it
// compares the admissions of 10 s with the rate measured before). The
// answers on the way are checked against docs/openapi.yaml like all.
func startWaitingRoom(t *testing.T, base string, admin map[string]string) int64 {
	t.Helper()
	now := time.Now().UTC()
	code, act := call(t, "POST", base+"/admin/v1/activities", admin, fmt.Sprintf(
		`{"name":"room","total_stock":1,"price_minor":100,"currency":"CNY","starts_at":%q,"ends_at":%q,"waiting_room":{}}`,
		now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)))
	if code != http.StatusCreated || act["waiting_room"] == nil {
		t.Fatalf("create with a waiting room: %d %v", code, act)
	}
	id := int64(act["id"].(float64))
	for user := 101; user <= 120; user++ {
		if code, v := call(t, "POST", fmt.Sprintf("%s/api/v1/activities/%d/queue", base, id), map[string]string{"X-User-ID": fmt.Sprint(user)}, ""); code != http.StatusOK {
			t.Fatalf("join as %d: %d %v", user, code, v)
		}
	}
	if code, v := call(t, "POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", base, id), map[string]string{"X-User-ID": "103"}, ""); code != http.StatusForbidden {
		t.Fatalf("purchase without an admission: %d %v, want 403 not_admitted", code, v)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, v := call(t, "GET", fmt.Sprintf("%s/api/v1/activities/%d/queue/mine", base, id), map[string]string{"X-User-ID": "101"}, "")
		if code == http.StatusOK && (v["state"] == "admitted" || v["state"] == "lapsed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first in line is not admitted: %d %v", code, v)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, v := call(t, "GET", fmt.Sprintf("%s/admin/v1/activities/%d/audit", base, id), admin, ""); code != http.StatusOK || v["admitted_open"] != float64(1) || v["draw_seed"] == nil {
		t.Fatalf("audit of the waiting room: %d %v", code, v)
	}
	return id
}

// waitForMetric scrapes /metrics until it has a line starting with series,
// and returns that scrape.
func waitForMetric(t *testing.T, base, series string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, text := getText(t, base+"/metrics")
		if strings.Contains(text, "\n"+series) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics has no %s after %v", series, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The check finds a metric that is not exported, in any position.
func TestMissingMetricsFindsUnknown(t *testing.T) {
	exported := scrapeFamilies(t, "# TYPE a_total counter\na_total 1\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
	for expr, want := range map[string][]string{
		`sum(rate(a_total[$__rate_interval]))`:                      nil,
		`histogram_quantile(0.9, sum by (le) (rate(h_bucket[1m])))`: nil,
		`rate(h_sum[1m]) / rate(h_count[1m])`:                       nil,
		`a_total / on() group_left b_total`:                         {"b_total"},
		`max by (x) (h) > 0 or {__name__="gone"}`:                   {"gone", "h"},
		`seckill_purchase_batch_size_bucket + up`:                   {"seckill_purchase_batch_size_bucket"},
		`histogram_quantile(0.5, rate(c_bucket[$__rate_interval]))`: {"c_bucket"},
	} {
		got := missingMetrics(t, query{file: "test", what: expr, expr: expr}, exported)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("missingMetrics(%s) = %v, want %v", expr, got, want)
		}
	}
}

// query is one PromQL expression of a dashboard panel or an alert rule.
type query struct{ file, what, expr string }

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
		Panels []json.RawMessage `json:"panels"` // a collapsed row's
	}
	var dash struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var qs []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				qs = append(qs, query{file: dashboardFile, what: fmt.Sprintf("panel %q", p.Title), expr: tg.Expr})
			}
			var nested []panel
			for _, r := range p.Panels {
				var n panel
				if err := json.Unmarshal(r, &n); err != nil {
					t.Fatalf("%s: panel in row %q: %v", dashboardFile, p.Title, err)
				}
				nested = append(nested, n)
			}
			walk(nested)
		}
	}
	walk(dash.Panels)
	return qs
}

func alertQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var qs []query
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			qs = append(qs, query{file: alertsFile, what: "rule " + r.Alert + r.Record, expr: r.Expr})
		}
	}
	return qs
}

func scrapeFamilies(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return fams
}

// grafanaVars are Grafana's interval variables, replaced by a duration
// before parsing; the dashboard uses no others.
var grafanaVars = strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m", "$__range", "1h")

// missingMetrics parses q and returns the metric names it selects that
// exported lacks. A histogram's _bucket, _sum and _count series belong to
// its family; its bare name selects nothing.
func missingMetrics(t *testing.T, q query, exported map[string]*dto.MetricFamily) []string {
	t.Helper()
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVars.Replace(q.expr))
	if err != nil {
		t.Errorf("%s: %s: %q does not parse: %v", q.file, q.what, q.expr, err)
		return nil
	}
	var missing []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel {
				name = m.Value
			}
		}
		if !exportedName(name, exported) && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return nil
	})
	return missing
}

func exportedName(name string, exported map[string]*dto.MetricFamily) bool {
	if f, ok := exported[name]; ok && f.GetType() != dto.MetricType_HISTOGRAM || slices.Contains(fromPrometheus, name) {
		return true // a classic histogram has no series under its bare name
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		if f, ok := exported[base]; ok && (f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
			return true
		}
	}
	return false
}
