// report.js turns k6's end-of-test data into the short human-readable report
// that run.sh prints and RESULTS.md quotes: rates, latency percentiles, what
// every purchase came to, the audit, and each threshold's verdict.

function metric(data, name) {
  const m = data.metrics[name];
  return m ? m.values : undefined;
}

function count(data, name) {
  const v = metric(data, name);
  return v ? v.count : 0;
}

function fmtMs(v) {
  return v === undefined ? '-' : `${v.toFixed(v < 10 ? 2 : 1)}ms`;
}

export function report(data, S) {
  const lines = [];
  const add = (s = '') => lines.push(s);
  const runMs = data.state.testRunDurationMs;
  const setup = data.setup_data || {};
  add(`== seckill load test: scenario ${S.name}`);
  add(`activities ${(setup.activityIDs || ['?']).join(',')}, stock ${S.stock} each, test run ${(runMs / 1000).toFixed(1)}s`);

  const reqs = metric(data, 'http_reqs');
  const purchases = count(data, 'orders_created') + count(data, 'sold_out') + count(data, 'already_purchased') +
    count(data, 'user_rejected') + count(data, 'busy') + count(data, 'unavailable') + count(data, 'unexpected_status') +
    count(data, 'not_enough_stock');
  const iters = metric(data, 'iterations');
  add(`purchase requests ${purchases} (${(purchases / (runMs / 1000)).toFixed(0)}/s over the run); all HTTP requests ${reqs ? reqs.count : '?'}`);
  add(`buyers ${iters ? iters.count : 0}; dropped arrivals ${count(data, 'dropped_iterations')} (k6 had no free VU); gave up after retries ${count(data, 'buyers_gave_up')}`);

  const d = metric(data, 'http_req_duration{name:purchase}') || metric(data, 'http_req_duration');
  if (d) add(`purchase latency p50 ${fmtMs(d.med)}  p90 ${fmtMs(d['p(90)'])}  p95 ${fmtMs(d['p(95)'])}  p99 ${fmtMs(d['p(99)'])}  max ${fmtMs(d.max)}`);
  const storm = metric(data, 'http_req_duration{name:purchase,scenario:storm}');
  const stormReqs = metric(data, 'http_reqs{scenario:storm}');
  if (storm && stormReqs && S.stormMs) {
    add(`sold-out storm: ${stormReqs.count} requests, ${(stormReqs.count / (S.stormMs / 1000)).toFixed(0)}/s over ${(S.stormMs / 1000).toFixed(0)}s; ` +
      `p50 ${fmtMs(storm.med)} p95 ${fmtMs(storm['p(95)'])} p99 ${fmtMs(storm['p(99)'])}`);
  }

  add('outcomes: ' + [
    ['201 created', 'orders_created'], ['409 sold_out', 'sold_out'], ['409 already_purchased', 'already_purchased'],
    ['403 user_rejected', 'user_rejected'], ['429 busy', 'busy'], ['503 unavailable', 'unavailable'], ['unexpected', 'unexpected_status'],
  ].map(([label, name]) => `${label} ${count(data, name)}`).join(', '));
  if (S.perUserLimit) {
    add(`quantities 1..${S.perUserLimit}: units in 201s ${count(data, 'units_created')}, 409 not_enough_stock ${count(data, 'not_enough_stock')}, ` +
      `quantity mismatches ${count(data, 'quantity_mismatch')}`);
  }
  if (S.fault) {
    const ph = (name, p) => count(data, `${name}{phase:${p}}`);
    add(`fault window ${S.fault.fromMs / 1000}s-${S.fault.toMs / 1000}s: orders before/during/after ` +
      `${ph('orders_created', 'before')}/${count(data, 'orders_created') - ph('orders_created', 'before') - ph('orders_created', 'after')}/${ph('orders_created', 'after')}; ` +
      `503 during ${ph('unavailable', 'fault')}`);
  }

  const total = metric(data, 'audit_total_stock');
  if (total) {
    const orders = metric(data, 'audit_orders').value;
    const units = metric(data, 'audit_units').value;
    const rem = metric(data, 'audit_redis_remaining').value;
    add(`audit (all activities): total ${total.value}, orders ${orders}, units ${units}, redis remaining ${rem}, ` +
      `units+remaining-total ${units + rem - total.value}; per-activity verdicts in the k6 log`);
  } else {
    add('audit: MISSING (teardown did not get an answer)');
  }

  let failed = 0;
  add('thresholds:');
  for (const [name, m] of Object.entries(data.metrics)) {
    if (!m.thresholds) continue;
    for (const [expr, r] of Object.entries(m.thresholds)) {
      if (!r.ok) failed++;
      add(`  ${r.ok ? 'ok  ' : 'FAIL'} ${name} ${expr}`);
    }
  }
  add(failed === 0 ? 'RESULT: all thresholds passed' : `RESULT: ${failed} threshold(s) FAILED`);
  return lines.join('\n') + '\n';
}
