package httpapi

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// blockingCollector stands for a collector that reads a slow database: each
// Collect says it started on entered, then waits for release.
type blockingCollector struct {
	desc    *prometheus.Desc
	entered chan struct{}
	release chan struct{}
}

func newBlockingCollector() *blockingCollector {
	return &blockingCollector{
		desc:    prometheus.NewDesc("test_slow", "A gauge that takes its time.", nil, nil),
		entered: make(chan struct{}, 2*MetricsMaxInFlight),
		release: make(chan struct{}),
	}
}

func (c *blockingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *blockingCollector) Collect(ch chan<- prometheus.Metric) {
	c.entered <- struct{}{}
	<-c.release
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1)
}

// slowMetricsServer serves /metrics from a registry holding only c.
func slowMetricsServer(t *testing.T, c *blockingCollector) http.Handler {
	t.Helper()
	slow := prometheus.NewRegistry()
	slow.MustRegister(c)
	return NewServer(Config{}, withParts(Deps{Service: newFake(), Registry: prometheus.NewRegistry(), Gatherer: slow}))
}

// scrapeAsync scrapes /metrics in a goroutine and sends the answer's status.
func scrapeAsync(h http.Handler, wg *sync.WaitGroup, status chan<- int) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		status <- serve(h, request{"GET", "/metrics", "", nil}).Code
	}()
}

// Scrapes beyond MetricsMaxInFlight are answered 503 at once instead of
// each running its own slow collection (its own database count).
func TestMetricsScrapesInFlightAreLimited(t *testing.T) {
	t.Parallel()
	c := newBlockingCollector()
	h := slowMetricsServer(t, c)
	var wg sync.WaitGroup
	defer wg.Wait()
	released := sync.OnceFunc(func() { close(c.release) })
	defer released()

	held := make(chan int, MetricsMaxInFlight)
	for range MetricsMaxInFlight {
		scrapeAsync(h, &wg, held)
	}
	for range MetricsMaxInFlight {
		select {
		case <-c.entered:
		case <-time.After(MetricsTimeout):
			t.Fatal("the first scrapes did not all start collecting")
		}
	}

	over := make(chan int, 1)
	scrapeAsync(h, &wg, over)
	select {
	case code := <-over:
		if code != http.StatusServiceUnavailable {
			t.Errorf("scrape %d while %d run: %d, want 503", MetricsMaxInFlight+1, MetricsMaxInFlight, code)
		}
	case <-c.entered:
		t.Errorf("scrape %d while %d run started collecting too: no in-flight limit", MetricsMaxInFlight+1, MetricsMaxInFlight)
	case <-time.After(MetricsTimeout / 2):
		t.Errorf("scrape %d while %d run got no answer: no in-flight limit", MetricsMaxInFlight+1, MetricsMaxInFlight)
	}

	released()
	for range MetricsMaxInFlight {
		if code := <-held; code != http.StatusOK {
			t.Errorf("a scrape within the limit: %d, want 200", code)
		}
	}
	// The limit is of scrapes in flight, not a quota: once they are done,
	// the next one is served.
	if code := serve(h, request{"GET", "/metrics", "", nil}).Code; code != http.StatusOK {
		t.Errorf("a scrape after the others finished: %d, want 200", code)
	}
}

// A scrape whose collection takes longer than MetricsTimeout is answered
// 503 when the time is up, not held open until the collection ends.
func TestMetricsScrapeTimesOut(t *testing.T) {
	t.Parallel()
	c := newBlockingCollector()
	h := slowMetricsServer(t, c)
	defer close(c.release)

	req := httptest.NewRequest("GET", "http://seckill.test/metrics", nil)
	rec := httptest.NewRecorder()
	answered := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(answered)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-answered:
	case <-time.After(MetricsTimeout + 5*time.Second):
		t.Fatalf("no answer %v after the scrape started: no timeout", time.Since(start))
	}
	if took := time.Since(start); rec.Code != http.StatusServiceUnavailable || took < MetricsTimeout {
		t.Errorf("a stuck scrape: %d after %v, want 503 after %v", rec.Code, took, MetricsTimeout)
	}
	checkAnswer(req, rec)
}
