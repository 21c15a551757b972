package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write puts text in a file of the test's own and returns its path.
func write(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The bench's runs: one activity then two at 4 connections, one instance
// then two at 64, with /healthz measured at 64.
const runsText = `conns=4 instances=1 activities=1 orders=300 rss_mb=40 healthz_per_s=- requests=600 duration_s=3.000 errors=0 p50_ms=1.20 p99_ms=5.00 code_201=300 code_409=300 batches=20 mean_batch=12.5 grant_ms=2.00 verify_ms=- deduct_ms=- write_ms=10.00 release_ms=- write_groups=4 mean_group=2.5 group_ms=5.00
conns=4 instances=1 activities=2 orders=450 rss_mb=41 healthz_per_s=- requests=900 duration_s=3.000 errors=0 p50_ms=1.10 p99_ms=4.00 code_201=450 code_429=450 batches=0 mean_batch=0.0 grant_ms=- verify_ms=- deduct_ms=- write_ms=- release_ms=- write_groups=0 mean_group=- group_ms=-
conns=64 instances=1 activities=1 orders=1000 rss_mb=50 healthz_per_s=4000 requests=1000 duration_s=2.000 errors=0 p50_ms=3.00 p99_ms=9.00 code_201=1000
conns=64 instances=2 activities=1 orders=1500 rss_mb=52 healthz_per_s=4000 requests=2000 duration_s=2.000 errors=1 p50_ms=4.00 p99_ms=12.00 code_201=1500 code_503=500
`

func TestCommands(t *testing.T) {
	runs := write(t, "runs.txt", runsText)
	wrk0 := write(t, "wrk-0.out", "Running 3s test @ http://127.0.0.1:1\n  2 threads and 4 connections\nRequests/sec:   1234.56\nBENCH requests=600 duration_s=3.001 errors=1 p50_ms=1.20 p99_ms=5.00 code_201=590 code_409=10\n")
	wrk1 := write(t, "wrk-1.out", "BENCH requests=400 duration_s=3.010 errors=0 p50_ms=1.50 p99_ms=4.00 code_201=400 code_503=0\n")
	samples := write(t, "samples.csv", "label,elapsed_s,instance,rss_kb,goroutines,open_fds\n"+
		"before,0,1,1000,20,9\nbefore,0,2,1100,22,9\nload,10,1,9000,400,90\nload,10,2,8000,,90\nidle,30,1,3000,25,10\nidle,30,2,3100,30,10\n")
	checkRuns(t, []runCase{
		{"value of a gauge", readFixture(t, "after.prom"), []string{"value", "go_goroutines"}, "57\n"},
		{"value not scraped", readFixture(t, "after.prom"), []string{"value", "process_open_fds"}, ""},
		{"timeline", "", []string{"timeline", "testdata/before.prom", "testdata/after.prom"},
			"batches=20 mean_batch=12.5 grant_ms=2.00 verify_ms=3.50 deduct_ms=- write_ms=10.00 release_ms=- write_groups=4 mean_group=2.5 group_ms=5.00\n"},
		{"timeline of nothing", "", []string{"timeline", "testdata/after.prom", "testdata/after.prom"},
			"batches=0 mean_batch=0.0 grant_ms=- verify_ms=- deduct_ms=- write_ms=- release_ms=- write_groups=0 mean_group=- group_ms=-\n"},
		{"wrk side by side", "", []string{"wrk", wrk0, wrk1},
			"BENCH requests=1000 duration_s=3.010 errors=1 p50_ms=1.50 p99_ms=5.00 code_201=990 code_409=10 code_503=0\n"},
		{"rate", "Running 3s test\nRequests/sec:   1234.56\nTransfer/sec: 1MB\n", []string{"rate"}, "1234\n"},
		{"rate without one", "unable to connect\n", []string{"rate"}, ""},
		{"ratio of the last run", "", []string{"ratio", runs},
			"BENCH_RATIO conns=64 instances=2 activities=1 orders_per_s=750 vs_one_activity=1.00 vs_one_instance=1.50 healthz_per_s=4000 vs_healthz=0.19\n"},
		{"samples", "", []string{"samples", samples}, "1,20,400,25,9000\n2,22,30,30,8000\n"},
	})
}

// runCase is one run of the command: its arguments and standard input,
// and the output it must print.
type runCase struct {
	name, stdin string
	args        []string
	want        string
}

// checkRuns runs the command on each case, as a subtest.
func checkRuns(t *testing.T, cases []runCase) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(tt.args, strings.NewReader(tt.stdin), &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestTables(t *testing.T) {
	runs := write(t, "runs.txt", runsText)
	tests := []struct {
		cmd  string
		want string
	}{
		{"orders", `| connections | instances | activities | answers/s | durable orders/s (SQL) | ÷ 1 activity | ÷ 1 instance | /healthz answers/s | ÷ /healthz | 201 | 409 | 429 | 503 | p50 ms | p99 ms | service RSS MB |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 4 | 1 | 1 | 200 | **100** | 1.00 | 1.00 | - | - | 50.0% | 300 | 0.0% | 0.0% | 1.20 | 5.00 | 40 |
| 4 | 1 | 2 | 300 | **150** | 1.50 | 1.00 | - | - | 50.0% | 0 | 50.0% | 0.0% | 1.10 | 4.00 | 41 |
| 64 | 1 | 1 | 500 | **500** | 1.00 | 1.00 | 4000 | 0.12 | 100.0% | 0 | 0.0% | 0.0% | 3.00 | 9.00 | 50 |
| 64 | 2 | 1 | 1000 | **750** | 1.00 | 1.50 | 4000 | 0.19 | 75.0% | 0 | 0.0% | 25.0% | 4.00 | 12.00 | 52 |
`},
		{"steps", `| connections | instances | activities | batches | buyers per batch | grant | verify | deduct | write | release | write groups | activities per group | group ms |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 4 | 1 | 1 | 20 | 12.5 | 2.00 | - | - | 10.00 | - | 4 | 2.5 | 5.00 |
| 4 | 1 | 2 | 0 | 0.0 | - | - | - | - | - | 0 | - | - |
| 64 | 1 | 1 |  |  |  |  |  |  |  |  |  |  |
| 64 | 2 | 1 |  |  |  |  |  |  |  |  |  |  |
`},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			var out bytes.Buffer
			if err := run([]string{tt.cmd, runs}, nil, &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	empty := write(t, "wrk.out", "unable to connect\n")
	for _, args := range [][]string{nil, {"nope"}, {"timeline", "one"}, {"wrk"}, {"wrk", empty}, {"ratio", empty}} {
		if err := run(args, strings.NewReader(""), &bytes.Buffer{}); err == nil {
			t.Errorf("metrictable %v: no error", args)
		}
	}
	if err := run([]string{"value", "x"}, strings.NewReader("not { a scrape\n"), &bytes.Buffer{}); err == nil {
		t.Error("a broken scrape was read")
	}
}
