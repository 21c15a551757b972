-- bench.lua: wrk script for loadtest/bench.sh. Every request is a purchase
-- by a buyer of its own (X-User-ID unique across threads), of the activities
-- whose orders paths are the script's arguments, round-robin (one argument:
-- one hot activity); no retries, as a crowd's first presses. done() prints one machine-readable line: requests, duration,
-- latency percentiles and the count of answers per HTTP status. BENCH_QUANTITY=k sends the body {"quantity":k} with
-- every purchase (unset: no body, the contract's one unit).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  paths = args
  -- BENCH_USER_BASE keeps the buyers of several wrk processes (bench.sh
  -- --instances) apart.
  base = tonumber(os.getenv("BENCH_USER_BASE") or "0") + tid * 1000000000
  n = 0
  codes = {}
  local q = os.getenv("BENCH_QUANTITY") or ""
  if q ~= "" then
    body = string.format('{"quantity":%d}', tonumber(q))
    headers = { ["Content-Type"] = "application/json" }
  else
    headers = {}
  end
end

function request()
  n = n + 1
  headers["X-User-ID"] = string.format("%d", base + n)
  return wrk.format("POST", paths[(n % #paths) + 1], headers, body)
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for code, c in pairs(t:get("codes")) do
      total[code] = (total[code] or 0) + c
    end
  end
  io.write(string.format("BENCH requests=%d duration_s=%.3f errors=%d p50_ms=%.2f p99_ms=%.2f",
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
  for code, c in pairs(total) do
    io.write(string.format(" code_%d=%d", code, c))
  end
  io.write("\n")
end
