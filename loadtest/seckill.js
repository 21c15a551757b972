// seckill.js drives the seckill service over HTTP, the way a flash sale does,
// and fails (k6 exits non-zero) when a single unit is oversold or the books do
// not balance. One script, several scenarios: pick one with -e SCENARIO=name
// (see scenarios.js). loadtest/run.sh starts the service and its dependencies
// and runs this; run by hand it needs at least BASE_URLS and ADMIN_TOKEN.
//
// Environment (k6 -e NAME=value, or the process environment):
//   SCENARIO       smoke | spike | slow-verification | verification-down |
//                  redis-delay | multi-instance | soldout-storm | soak | payments |
//                  quantity  (default smoke)
//   BASE_URLS      comma-separated service base URLs; buyers are spread over them
//   ADMIN_TOKEN    the service's SECKILL_ADMIN_TOKEN (or SECKILL_LT_ADMIN_TOKEN)
//   STUB_URL       the user-verification stub; setup() sets its behaviour
//   PROXY_URL      control endpoint of cmd/faultproxy (redis-delay)
//   PAYSTUB_URL    the payment stub (payments): buyers pay through it
//   OUT_DIR        where handleSummary writes <scenario>-summary.json and -report.txt
//   STOCK, USERS, RATE, DURATION, RAMP, MAX_VUS, P99_MS, ...: see scenarios.js
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
import { Counter, Gauge } from 'k6/metrics';

import { scenario, env, num } from './scenarios.js';
import { report } from './report.js';

const S = scenario(env('SCENARIO', 'smoke'));
const BASE_URLS = env('BASE_URLS', 'http://127.0.0.1:8080').split(',').map((u) => u.trim().replace(/\/$/, '')).filter(Boolean);
const ADMIN_TOKEN = env('ADMIN_TOKEN', env('SECKILL_LT_ADMIN_TOKEN', ''));
const STUB_URL = env('STUB_URL', '');
const PROXY_URL = env('PROXY_URL', '');
const PAYSTUB_URL = env('PAYSTUB_URL', '');
const OUT_DIR = env('OUT_DIR', 'loadtest/out');

// A buyer's bounded retries. A real app waits Retry-After (whole seconds); a
// load test compresses that to a short jittered backoff so one buyer stays
// within a second, yet still comes back like a real client.
const MAX_ATTEMPTS = num('MAX_ATTEMPTS', 8);
const BACKOFF_MS = num('BACKOFF_MS', 20);
const BACKOFF_CAP_MS = num('BACKOFF_CAP_MS', 250);

// Outcomes of purchase requests. Every response is exactly one of these;
// unexpected_status (anything the contract does not allow here, transport
// errors included) must stay at zero.
const ordersCreated = new Counter('orders_created');
// The units of the 201s: an order's "quantity" (1 when the body has none).
// Each sample carries the order's id as metadata, so run.sh can find every
// 201's row in MariaDB, with its quantity, from k6's CSV output.
const unitsCreated = new Counter('units_created');
// quantity: a 201 whose quantity is not the one asked for, or a 409
// not_enough_stock whose remaining_stock is not 1..quantity-1.
const quantityMismatch = new Counter('quantity_mismatch');
const notEnoughStock = new Counter('not_enough_stock');
const soldOut = new Counter('sold_out');
const alreadyPurchased = new Counter('already_purchased');
const rejected = new Counter('user_rejected');
const busy = new Counter('busy');
const unavailable = new Counter('unavailable');
const unexpected = new Counter('unexpected_status');
const gaveUp = new Counter('buyers_gave_up');
const chaosErrors = new Counter('chaos_errors');
// payments: buyers who paid, buyers who walked away, and stub calls that failed.
const ordersPaid = new Counter('orders_paid');
const ordersLeftUnpaid = new Counter('orders_left_unpaid');
const paymentErrors = new Counter('payment_errors');
// Written by teardown() from the audit endpoint; a threshold fails the run
// when the audit finds an oversell or books that do not balance.
const auditViolations = new Counter('audit_violations');
const auditOrders = new Gauge('audit_orders');
const auditUnits = new Gauge('audit_units');
const auditRemaining = new Gauge('audit_redis_remaining');
const auditTotal = new Gauge('audit_total_stock');

// 503 is the right answer while a dependency is down; elsewhere it counts
// against http_req_failed like any other failure.
http.setResponseCallback(http.expectedStatuses(...S.expectedStatuses));

export const options = {
  scenarios: S.scenarios,
  thresholds: S.thresholds,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
  setupTimeout: '60s',
  teardownTimeout: '60s',
  // Many short requests from few processes: keep connections alive, and do
  // not let k6 spend the box's CPU on per-request DNS or TLS work.
  noConnectionReuse: false,
  discardResponseBodies: false,
};

function adminHeaders() {
  return { headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, tags: { name: 'admin' }, timeout: '20s' };
}

function mustStatus(res, want, what) {
  if (res.status !== want) {
    throw new Error(`${what}: want HTTP ${want}, got ${res.status} ${res.error || ''} ${String(res.body).slice(0, 300)}`);
  }
  return res.json();
}

function rfc3339(d) {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// setup creates the activity and loads its stock, sets the stub's behaviour,
// and checks that every instance sees the activity before the sale starts.
export function setup() {
  if (!ADMIN_TOKEN) {
    throw new Error('ADMIN_TOKEN is not set: the admin API is needed to create the activity');
  }
  if (S.needsStub && !STUB_URL) throw new Error(`scenario ${S.name} needs STUB_URL (the user-verification stub)`);
  if (S.stub && STUB_URL) {
    mustStatus(http.put(`${STUB_URL}/stub/config`, JSON.stringify(S.stub), { headers: { 'Content-Type': 'application/json' }, tags: { name: 'chaos' } }), 200, 'stub config');
  }
  if (S.needsProxy && !PROXY_URL) throw new Error(`scenario ${S.name} needs PROXY_URL (cmd/faultproxy's control endpoint)`);
  if (S.payments) {
    if (!PAYSTUB_URL) throw new Error(`scenario ${S.name} needs PAYSTUB_URL (the payment stub)`);
    mustStatus(http.put(`${PAYSTUB_URL}/stub/config`, JSON.stringify({ latency: '1ms', fail_rate: 0, callback_url: BASE_URLS[0] }),
      { headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, tags: { name: 'chaos' } }), 200, 'payment stub config');
  }

  const now = Date.now();
  const base = BASE_URLS[0];
  const ids = [];
  for (let i = 0; i < S.activities; i++) {
    const act = mustStatus(http.post(`${base}/admin/v1/activities`, JSON.stringify({
      name: `loadtest ${S.name} ${rfc3339(new Date(now))} #${i + 1}`,
      total_stock: S.stock,
      // Only when the scenario asks: a build before quantities refuses it.
      ...(S.perUserLimit ? { per_user_limit: S.perUserLimit } : {}),
      // Priced: with payments on, the service refuses an unpriced activity
      // (secure defaults), and the payment stub answers this price.
      price_minor: 100,
      currency: 'CNY',
      starts_at: rfc3339(new Date(now - 60 * 1000)),
      ends_at: rfc3339(new Date(now + 3600 * 1000)),
    }), adminHeaders()), 201, 'create activity');
    const pre = mustStatus(http.post(`${base}/admin/v1/activities/${act.id}/preload`, null, adminHeaders()), 200, 'preload');
    if (S.perUserLimit && act.per_user_limit !== S.perUserLimit) {
      throw new Error(`create activity: per_user_limit ${act.per_user_limit}, want ${S.perUserLimit}`);
    }
    if (pre.remaining_stock !== S.stock) {
      throw new Error(`preload: remaining_stock ${pre.remaining_stock}, want ${S.stock}`);
    }
    for (const u of BASE_URLS) {
      const got = mustStatus(http.get(`${u}/api/v1/activities/${act.id}`, { tags: { name: 'admin' } }), 200, `activity on ${u}`);
      if (got.status !== 'active') throw new Error(`activity ${act.id} on ${u} is ${got.status}, want active`);
    }
    ids.push(act.id);
  }
  console.log(`setup: scenario ${S.name}, activities ${ids.join(',')}, stock ${S.stock} each, instances ${BASE_URLS.join(' ')}`);
  return { activityIDs: ids, stock: S.stock, scenario: S.name, startedAt: now, perUserLimit: S.perUserLimit };
}

function backoff(attempt, res) {
  // Retry-After is whole seconds; honour its order of magnitude only up to
  // the cap, so a compressed sale still shows real retry pressure.
  const ra = parseInt(res.headers['Retry-After'] || '0', 10) * 1000;
  const exp = Math.min(BACKOFF_CAP_MS, BACKOFF_MS * 2 ** (attempt - 1), ra > 0 ? ra : BACKOFF_CAP_MS);
  sleep((exp / 2 + Math.random() * exp / 2) / 1000);
}

// phase names where the sale is relative to the scenario's fault window, so
// thresholds can require sales before and after a fault separately.
function phase() {
  if (!S.fault) return 'sale';
  const t = exec.instance.currentTestRunDuration;
  if (t < S.fault.fromMs) return 'before';
  if (t < S.fault.toMs) return 'fault';
  return 'after';
}

function errorCode(res) {
  try {
    return res.json('error.code');
  } catch (_) {
    return undefined;
  }
}

// buy is one buyer: a distinct user id who tries to buy one unit (in the
// quantity scenario a random 1..per_user_limit units, the same on every
// retry) and retries a bounded number of times on 429 busy and 503
// unavailable.
export function buy(data) {
  const userID = S.userBase[exec.scenario.name] + exec.scenario.iterationInTest + 1;
  const base = BASE_URLS[userID % BASE_URLS.length];
  const ids = data.activityIDs;
  const url = `${base}/api/v1/activities/${ids[Math.floor(userID / BASE_URLS.length) % ids.length]}/orders`;
  const params = { headers: { 'X-User-ID': String(userID) }, tags: { name: 'purchase' }, timeout: S.requestTimeout };
  const quantity = S.perUserLimit ? 1 + Math.floor(Math.random() * S.perUserLimit) : 1;
  let body = null;
  if (S.perUserLimit) {
    body = JSON.stringify({ quantity });
    params.headers['Content-Type'] = 'application/json';
  }
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const p = phase();
    params.tags.phase = p;
    const res = http.post(url, body, params);
    const tags = { phase: p };
    switch (res.status) {
      case 201: {
        const order = res.json();
        ordersCreated.add(1, tags);
        created(order, quantity, tags);
        if (S.payments) pay(order, base, userID);
        return;
      }
      case 409: {
        const code = errorCode(res);
        if (code === 'sold_out') soldOut.add(1, tags);
        else if (code === 'already_purchased') alreadyPurchased.add(1, tags); // an earlier attempt of ours won
        else if (code === 'not_enough_stock' && S.perUserLimit) notEnough(res, quantity, tags);
        else unexpected.add(1, { ...tags, status: '409', code: String(code) });
        return;
      }
      case 403:
        if (errorCode(res) === 'user_rejected') rejected.add(1, tags);
        else unexpected.add(1, { ...tags, status: '403' });
        return;
      case 429:
        busy.add(1, tags);
        break;
      case 503:
        unavailable.add(1, tags);
        break;
      default:
        unexpected.add(1, { ...tags, status: String(res.status) });
        if (res.status === 0 || res.status >= 500) console.warn(`buyer ${userID}: HTTP ${res.status} ${res.error || ''} ${String(res.body).slice(0, 200)}`);
        return;
    }
    if (attempt < MAX_ATTEMPTS) backoff(attempt, res);
  }
  gaveUp.add(1);
}

// created counts a 201's units, its order id attached (metadata: one value
// per sample, not a time series per order), and checks its quantity.
function created(order, asked, tags) {
  const units = order.quantity === undefined ? 1 : order.quantity;
  if (S.perUserLimit && units !== asked) {
    quantityMismatch.add(1, { ...tags, what: 'order_quantity' });
    console.warn(`order ${order.order_id}: quantity ${order.quantity}, asked ${asked}`);
  }
  const md = exec.vu.metrics.metadata;
  md.order_id = String(order.order_id);
  unitsCreated.add(units, tags);
  delete md.order_id;
}

// notEnough counts a 409 not_enough_stock, which must name the units left:
// some, but fewer than asked (none left is sold_out).
function notEnough(res, asked, tags) {
  notEnoughStock.add(1, tags);
  let left;
  try {
    left = res.json('error.remaining_stock');
    if (left === undefined || left === null) left = res.json('remaining_stock');
  } catch (_) {
    left = undefined;
  }
  if (!(Number.isInteger(left) && left >= 1 && left < asked)) {
    quantityMismatch.add(1, { ...tags, what: 'remaining_stock' });
    console.warn(`not_enough_stock for ${asked}: remaining_stock ${left}`);
  }
}

// pay is what a buyer does with a new order in the payments scenario: pay
// through the stub, which sends the service a signed callback, then look at
// the result page; or walk away (until late in the sale) and let it expire.
function pay(order, base, userID) {
  const t = exec.instance.currentTestRunDuration;
  if (t < S.payments.neverPayUntilMs && Math.random() >= S.payments.share) {
    ordersLeftUnpaid.add(1);
    return;
  }
  const res = http.put(`${PAYSTUB_URL}/stub/payments/${order.order_id}`,
    JSON.stringify({ status: 'paid', callbacks: 1, callback_delay: `${Math.floor(Math.random() * 200)}ms` }),
    { headers: { 'Content-Type': 'application/json' }, tags: { name: 'payment' } });
  if (res.status !== 202) {
    paymentErrors.add(1);
    return;
  }
  ordersPaid.add(1);
  sleep(0.3);
  http.get(`${base}/api/v1/activities/${order.activity_id}/orders/mine`, { headers: { 'X-User-ID': String(userID) }, tags: { name: 'result_page' } });
}

// chaos plays the scenario's fault schedule: a list of HTTP calls to the
// stub or the fault proxy at set times from the start of the test.
export function chaos() {
  for (const step of S.chaos) {
    const wait = step.atMs - exec.instance.currentTestRunDuration;
    if (wait > 0) sleep(wait / 1000);
    const url = step.target === 'stub' ? `${STUB_URL}${step.path}` : `${PROXY_URL}${step.path}`;
    const res = http.request(step.method, url, step.body ? JSON.stringify(step.body) : null, {
      headers: { 'Content-Type': 'application/json' }, tags: { name: 'chaos' }, timeout: '5s',
    });
    const ok = res.status >= 200 && res.status < 300;
    if (!ok) chaosErrors.add(1);
    console.log(`chaos @${(exec.instance.currentTestRunDuration / 1000).toFixed(1)}s: ${step.what}: ${step.method} ${url} -> ${res.status}`);
  }
}

// teardown asks the service to audit the activity: orders in the database
// against its total and the stock left in Redis. A purchase still in flight
// may hold a unit between Redis and the database for a moment, so an
// imbalance is read again a few times before it counts.
export function teardown(data) {
  if (S.stub && STUB_URL) {
    // Leave the stub healthy for whoever looks at the service afterwards.
    http.put(`${STUB_URL}/stub/config`, JSON.stringify({ latency: '0s', slow_rate: 0, fail_rate: 0, reject_rate: 0 }), { headers: { 'Content-Type': 'application/json' }, tags: { name: 'chaos' } });
  }
  if (PROXY_URL) {
    http.put(`${PROXY_URL}/delay?d=0s`, null, { tags: { name: 'chaos' } });
    http.put(`${PROXY_URL}/request-delay?d=0s`, null, { tags: { name: 'chaos' } });
    http.put(`${PROXY_URL}/down?v=false`, null, { tags: { name: 'chaos' } });
  }
  if (S.payments) {
    // Orders of the last buyers are paid or expire within one window (and
    // the delay queue's second) after the sale.
    sleep((S.payments.windowMs + 3000) / 1000);
  }
  let orders = 0, units = 0, remaining = 0, total = 0;
  const failures = [];
  for (const id of data.activityIDs) {
    let audit;
    for (let i = 0; i < 10; i++) {
      const res = http.get(`${BASE_URLS[0]}/admin/v1/activities/${id}/audit`, adminHeaders());
      if (res.status === 200) {
        audit = res.json();
        if (audit.oversold || audit.consistent) break; // an oversell never heals itself
      }
      sleep(0.5);
    }
    if (!audit) {
      auditViolations.add(1, { what: 'no_audit' });
      failures.push(`activity ${id}: no answer from the audit endpoint`);
      continue;
    }
    // The audit counts units (orders of k units hold k); a build before
    // quantities has only orders, one unit each.
    const held = audit.units === undefined ? audit.orders : audit.units;
    orders += audit.orders;
    units += held;
    remaining += audit.redis_remaining;
    total += audit.total_stock;
    const line = `audit activity ${audit.activity_id}: total ${audit.total_stock}, orders ${audit.orders}, units ${audit.units}, redis_remaining ${audit.redis_remaining}, oversold ${audit.oversold}, consistent ${audit.consistent}`;
    if (audit.oversold) auditViolations.add(1, { what: 'oversold' });
    if (!audit.consistent) auditViolations.add(1, { what: 'inconsistent' });
    // The service's own verdicts, checked in units here too: a verdict
    // still counting orders would pass an oversell in units.
    const unitsOff = held > audit.total_stock || held + audit.redis_remaining !== audit.total_stock;
    const noUnits = S.perUserLimit && audit.units === undefined;
    if (unitsOff && !audit.oversold && audit.consistent) auditViolations.add(1, { what: 'units' });
    if (noUnits) auditViolations.add(1, { what: 'no_units' });
    if (audit.oversold || !audit.consistent || unitsOff || noUnits) {
      failures.push(`${line} (oversold by ${Math.max(0, held - audit.total_stock)} units${noUnits ? '; the audit has no units' : ''})`);
    } else console.log(line);
  }
  auditOrders.add(orders);
  auditUnits.add(units);
  auditRemaining.add(remaining);
  auditTotal.add(total);
  if (failures.length > 0) throw new Error(`AUDIT FAILED: ${failures.join('; ')}`);
}

export function handleSummary(data) {
  const text = report(data, S);
  return {
    stdout: text,
    [`${OUT_DIR}/${S.name}-summary.json`]: JSON.stringify(data, null, 2),
    [`${OUT_DIR}/${S.name}-report.txt`]: text,
  };
}
