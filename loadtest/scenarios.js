// scenarios.js defines the load-test scenarios of issue 4: how many units,
// how buyers arrive, what breaks and when, and the thresholds that make k6
// exit non-zero. Every number can be overridden with k6 -e NAME=value (or
// the process environment); loadtest/run.sh passes its flags through.

export function env(name, def) {
  const v = __ENV[name];
  return v === undefined || v === '' ? def : v;
}

export function num(name, def) {
  const v = Number(env(name, def));
  if (!Number.isFinite(v)) throw new Error(`${name}=${__ENV[name]}: not a number`);
  return v;
}

// ms parses a Go-style duration ("300ms", "2s", "1m", "1.5s") to milliseconds.
export function ms(s) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(String(s).trim());
  if (!m) throw new Error(`duration ${s}: use a number with ms, s or m`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2]];
}

const dur = (msec) => `${Math.max(1, Math.round(msec))}ms`;

// Buyers of each k6 scenario get user ids from their own range, so a storm
// buyer is never the same person as a sale buyer.
const USER_BASE = { sale: 0, storm: 10000000 };

function arrival(rate, durationMs, maxVUs, startMs = 0) {
  return {
    executor: 'constant-arrival-rate',
    exec: 'buy',
    rate,
    timeUnit: '1s',
    duration: dur(durationMs),
    startTime: dur(startMs),
    preAllocatedVUs: Math.min(maxVUs, num("PRE_VUS", Math.max(50, rate))),
    maxVUs,
  };
}

function chaosScenario(steps) {
  const last = Math.max(...steps.map((s) => s.atMs));
  return { executor: 'per-vu-iterations', exec: 'chaos', vus: 1, iterations: 1, maxDuration: dur(last + 30000) };
}

// Thresholds every scenario shares: the safety ones (never more orders than
// units, nothing the contract does not allow, the audit balances) and the
// latency target.
function thresholds(stock, p99, extra = {}, activities = num('ACTIVITIES', 1)) {
  const units = stock * activities;
  return {
    orders_created: [`count<=${units}`, 'count>0'],
    unexpected_status: ['count==0'],
    audit_violations: ['count==0'],
    chaos_errors: ['count==0'],
    'http_reqs{name:purchase}': ['count>0'],
    'http_req_failed{name:purchase}': [`rate<${num('MAX_FAILED_RATE', 0.01)}`],
    'http_req_duration{name:purchase}': [`p(99)<${num('P99_MS', p99)}`],
    ...extra,
  };
}

const OK = [201, 403, 409, 429];
const OK_DEGRADED = [...OK, 503]; // 503 unavailable is the right answer during a fault

function faultWindow(defFrom, defTo) {
  return { fromMs: ms(env('FAULT_AT', defFrom)), toMs: ms(env('FAULT_UNTIL', defTo)) };
}

// A fault scenario must show three things: it sold before the fault, the
// fault produced 503s (so it really happened), and it sold again after.
function faultThresholds() {
  return {
    'orders_created{phase:before}': ['count>0'],
    'unavailable{phase:fault}': ['count>0'],
    'orders_created{phase:after}': ['count>0'],
  };
}

const defs = {
  // smoke: a few seconds, small numbers, every check: what CI can afford.
  smoke() {
    const stock = num('STOCK', 50);
    const rate = num('RATE', 200);
    return {
      stock,
      stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 },
      scenarios: { sale: arrival(rate, ms(env('DURATION', '3s')), num('MAX_VUS', 200)) },
      expectedStatuses: OK,
      thresholds: thresholds(stock, 200),
    };
  },

  // spike: the opening of a sale. 20,000 distinct buyers for 1,000 units,
  // arriving at a rate that ramps to RATE within RAMP and holds until all
  // USERS have arrived.
  spike() {
    const stock = num('STOCK', 1000);
    const users = num('USERS', 20000);
    const rate = num('RATE', 2000);
    const rampMs = ms(env('RAMP', '2s'));
    const holdMs = Math.max(1000, ((users - (rate * rampMs) / 2000) / rate) * 1000);
    const maxVUs = num('MAX_VUS', 3000);
    return {
      stock,
      stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 },
      scenarios: {
        sale: {
          executor: 'ramping-arrival-rate',
          exec: 'buy',
          startRate: 0,
          timeUnit: '1s',
          stages: [{ target: rate, duration: dur(rampMs) }, { target: rate, duration: dur(holdMs) }],
          preAllocatedVUs: Math.min(maxVUs, num('PRE_VUS', 1000)),
          maxVUs,
        },
      },
      expectedStatuses: OK,
      thresholds: thresholds(stock, 250),
    };
  },

  // slow-verification: seed 001. A fifth of verifications take three lock
  // TTLs; the service must cut them off before its lease ends (503), never
  // sell under an expired lease, and keep selling.
  'slow-verification'() {
    const stock = num('STOCK', 300);
    const ttl = ms(env('LOCK_TTL', '300ms'));
    return {
      stock,
      needsStub: true,
      stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: num('SLOW_RATE', 0.2), slow_latency: env('SLOW_LATENCY', dur(3 * ttl)), fail_rate: 0, reject_rate: 0 },
      scenarios: { sale: arrival(num('RATE', 200), ms(env('DURATION', '20s')), num('MAX_VUS', 1000)) },
      expectedStatuses: OK_DEGRADED,
      // The service must have cut slow calls off (503); the naive build lets
      // them finish, which is how it oversells.
      thresholds: thresholds(stock, 1000, env('NAIVE', '0') === '1' ? {} : { unavailable: ['count>0'] }),
    };
  },

  // verification-down: the verification service fails every call from
  // FAULT_AT to FAULT_UNTIL. The breaker opens (fast 503s, nothing sold),
  // then closes again once the service is back and the sale goes on.
  'verification-down'() {
    const stock = num('STOCK', 2000);
    const fault = faultWindow('8s', '16s');
    const healthy = { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 };
    const chaos = [
      { atMs: fault.fromMs, target: 'stub', method: 'PUT', path: '/stub/config', body: { ...healthy, fail_rate: 1 }, what: 'verification down' },
      { atMs: fault.toMs, target: 'stub', method: 'PUT', path: '/stub/config', body: healthy, what: 'verification back' },
    ];
    return {
      stock,
      fault,
      chaos,
      needsStub: true,
      stub: healthy,
      scenarios: { sale: arrival(num('RATE', 100), ms(env('DURATION', '30s')), num('MAX_VUS', 500)), chaos: chaosScenario(chaos) },
      expectedStatuses: OK_DEGRADED,
      thresholds: thresholds(stock, 500, faultThresholds()),
    };
  },

  // redis-delay: seed 000. From FAULT_AT to FAULT_UNTIL a TCP proxy between
  // the service and Redis holds every reply for REDIS_DELAY, longer than the
  // service waits: commands land in Redis, their answers come too late. No
  // unit may be sold twice or lost, no lock may strand the activity.
  'redis-delay'() {
    const stock = num('STOCK', 2000);
    const fault = faultWindow('8s', '16s');
    const delay = env('REDIS_DELAY', '1500ms');
    const chaos = [
      { atMs: fault.fromMs, target: 'proxy', method: 'PUT', path: `/delay?d=${delay}`, what: `Redis replies delayed by ${delay}` },
      { atMs: fault.toMs, target: 'proxy', method: 'PUT', path: '/delay?d=0s', what: 'Redis replies on time' },
    ];
    return {
      stock,
      fault,
      chaos,
      needsProxy: true,
      stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 },
      scenarios: { sale: arrival(num('RATE', 100), ms(env('DURATION', '30s')), num('MAX_VUS', 1000)), chaos: chaosScenario(chaos) },
      expectedStatuses: OK_DEGRADED,
      thresholds: thresholds(stock, 3000, faultThresholds()),
    };
  },

  // multi-instance: the same sale through several service instances
  // (BASE_URLS) sharing one Redis and one database.
  'multi-instance'() {
    const stock = num('STOCK', 1000);
    return {
      stock,
      stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 },
      scenarios: { sale: arrival(num('RATE', 2000), ms(env('DURATION', '5s')), num('MAX_VUS', 1500)) },
      expectedStatuses: OK,
      thresholds: thresholds(stock, 250),
    };
  },

  // soldout-storm: a short sale sells out, then for STORM_DURATION buyers
  // keep arriving at STORM_RATE and must all get a fast 409 sold_out.
  'soldout-storm'() {
    const stock = num('STOCK', 200);
    const saleMs = ms(env('DURATION', '4s'));
    const stormAtMs = saleMs + ms(env('STORM_GAP', '2s'));
    const stormMs = ms(env('STORM_DURATION', '30s'));
    return {
      stock,
      stormMs,
      stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 },
      scenarios: {
        sale: arrival(num('RATE', 400), saleMs, num('MAX_VUS', 500)),
        storm: arrival(num('STORM_RATE', 5000), stormMs, num('STORM_MAX_VUS', 1000), stormAtMs),
      },
      expectedStatuses: OK,
      thresholds: thresholds(stock, 250, {
        // after the last unit nothing is sold and every answer is sold_out
        'orders_created{scenario:storm}': ['count==0'],
        'sold_out{scenario:storm}': ['count>0'],
        'http_req_duration{name:purchase,scenario:storm}': [`p(99)<${num('STORM_P99_MS', 100)}`],
        'http_reqs{scenario:storm}': ['count>0'],
      }),
    };
  },

  // quantity: "at most PER_USER_LIMIT (5) per customer". Every buyer asks
  // for a random quantity of 1..PER_USER_LIMIT units in one order, so the
  // sale ends with fewer units left than some buyers ask for (409
  // not_enough_stock) before the last one goes (409 sold_out). Safety is
  // counted in units: the units of the 201s never exceed the stock, each
  // 201 carries the quantity asked, and run.sh sums the orders' quantity in
  // MariaDB against the stock and Redis.
  quantity() {
    const stock = num('STOCK', 300);
    const naive = env('NAIVE', '0') === '1';
    const units = stock * num('ACTIVITIES', 1);
    return {
      stock,
      perUserLimit: num('PER_USER_LIMIT', 5),
      stub: {
        latency: env('STUB_LATENCY', '1ms'), slow_rate: num('SLOW_RATE', 0), slow_latency: env('SLOW_LATENCY', '1ms'),
        fail_rate: 0, reject_rate: 0,
      },
      scenarios: { sale: arrival(num('RATE', 200), ms(env('DURATION', '4s')), num('MAX_VUS', 300)) },
      // The naive build verifies buyers slower than its lock lives (run.sh
      // sets it up as for slow-verification), so a 503 may come back.
      expectedStatuses: naive ? OK_DEGRADED : OK,
      thresholds: thresholds(stock, naive ? 1000 : 300, {
        units_created: [`count<=${units}`, 'count>0'],
        quantity_mismatch: ['count==0'],
      }),
    };
  },

  // payments: a sale in which PAY_SHARE of the buyers pay (through the
  // payment stub, with a signed callback) and the rest never do. Their
  // orders expire after PAY_WINDOW and the units sell again to later buyers;
  // the last NEVER_PAY_STOPS of the sale every buyer pays, so at the end
  // every unit is paid by someone (run.sh counts them in the database).
  payments() {
    const stock = num('STOCK', 200);
    const durationMs = ms(env('DURATION', '30s'));
    const windowMs = ms(env('PAY_WINDOW', '3s'));
    return {
      stock,
      stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 },
      payments: {
        share: num('PAY_SHARE', 0.7),
        windowMs,
        neverPayUntilMs: durationMs - ms(env('NEVER_PAY_STOPS', '10s')),
      },
      scenarios: { sale: arrival(num('RATE', 100), durationMs, num('MAX_VUS', 500)) },
      expectedStatuses: [...OK, 503],
      // Units sell more than once (expired ones go back on sale), so the
      // shared "orders <= units" threshold does not apply; the database
      // check in run.sh and the audit are the books.
      thresholds: {
        ...thresholds(stock, 500),
        orders_created: [`count>${stock}`],
        orders_paid: ['count>0'],
        orders_left_unpaid: ['count>0'],
        payment_errors: ['count==0'],
      },
    };
  },
};

// soak: SOAK_DURATION (10 minutes) of buyers at a steady RATE spread over
// ACTIVITIES sales, sized so that they sell out about two thirds of the way
// through: the full purchase path first, the sold-out path after. run.sh
// samples the service's memory, goroutines and connections meanwhile.
defs.soak = function soak() {
  const rate = num('RATE', 100);
  const durationMs = ms(env('SOAK_DURATION', env('DURATION', '10m')));
  const activities = num('ACTIVITIES', 20);
  const stock = num('STOCK', Math.max(1, Math.ceil((rate * durationMs) / 1000 * 2 / 3 / activities)));
  return {
    stock,
    activities,
    stub: { latency: env('STUB_LATENCY', '1ms'), slow_rate: 0, fail_rate: 0, reject_rate: 0 },
    scenarios: { sale: arrival(rate, durationMs, num('MAX_VUS', 500)) },
    expectedStatuses: OK,
    thresholds: thresholds(stock, 500, { sold_out: ['count>0'] }, activities),
  };
};

export const NAMES = Object.keys(defs);

// scenario returns the named scenario with the fields seckill.js relies on.
export function scenario(name) {
  const def = defs[name];
  if (!def) throw new Error(`unknown SCENARIO ${name}; one of: ${NAMES.join(', ')}`);
  const s = def();
  return {
    name,
    chaos: [],
    fault: null,
    needsProxy: false,
    needsStub: false,
    payments: null,
    // 0: buyers send no body (one unit each, the contract's default).
    perUserLimit: 0,
    requestTimeout: env('REQUEST_TIMEOUT', '10s'),
    // Several activities at once, each with its own lock and stock; buyers
    // are spread over them. More sales ending at once means more chances to
    // catch a race at the last unit (run.sh --naive uses it).
    activities: num('ACTIVITIES', 1),
    userBase: USER_BASE,
    ...s,
  };
}
