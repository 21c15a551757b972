package main

import "testing"

// Two runs at 100 ticks a second: the first with its /healthz run (10,000
// purchases: 80 ticks of the service = 80 µs each; 20,000 probes: 40 ticks
// = 20 µs each), the second without, and a 409 that is not a 2xx answer.
const costRuns = `conns=64 instances=1 activities=1 orders=10000 requests=10000 duration_s=10.000 code_201=10000 cpu_gen=30 cpu_svc=80 cpu_db=30 cpu_redis=10 clk_tck=100 hz_svc=40 hz_db=0 hz_redis=0 hz_gen=16 hz_per_s=2000 hz_ok=20000
conns=256 instances=1 activities=1 orders=5000 requests=10000 duration_s=10.000 code_201=5000 code_409=5000 cpu_gen=5 cpu_svc=50 cpu_db=10 cpu_redis=5 clk_tck=100
`

func TestCosts(t *testing.T) {
	runs := write(t, "runs.txt", costRuns)
	checkRuns(t, []runCase{
		{"cost of the last run", "", []string{"cost", runs},
			"BENCH_CPU conns=256 instances=1 activities=1 us_per_2xx svc=100.0 db=20.0 redis=10.0 gen=10.0 box=140.0 healthz_svc=- healthz_box=- svc_vs_healthz=-\n"},
		{"table", "", []string{"costs", runs}, `| connections | instances | activities | 2xx answers | service µs | MariaDB µs | Redis µs | MariaDB + Redis µs | wrk µs | box µs | /healthz 2xx | /healthz service µs | /healthz box µs | service ÷ /healthz |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 64 | 1 | 1 | 10000 | **80.0** | 30.0 | 10.0 | 40.0 | 30.0 | 150.0 | 20000 | 20.0 | 28.0 | 4.00 |
| 256 | 1 | 1 | 5000 | **100.0** | 20.0 | 10.0 | 30.0 | 10.0 | 140.0 | - | - | - | - |
`},
		{"plain wrk", "Running 10s test @ http://x/healthz\n  200000 requests in 10.00s, 20MB read\n  Non-2xx or 3xx responses: 12\nRequests/sec:  19999.80\n",
			[]string{"plain"}, "hz_per_s=19999 hz_ok=199988\n"},
		{"plain wrk, every answer 2xx", "  300 requests in 1.00s, 1MB read\nRequests/sec:  300.00\n", []string{"plain"}, "hz_per_s=300 hz_ok=300\n"},
	})
}
