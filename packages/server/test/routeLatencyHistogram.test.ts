/**
 * The HTTP latency histogram is counted in cells of its own; a scrape must read exactly what
 * prom-client's own histogram would write for the same answers, bucket bounds included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { HTTP_LATENCY_BUCKETS } from '../src/metrics.js';
import { RouteLatencyHistogram } from '../src/routeLatencyHistogram.js';

const BUCKETS = [...HTTP_LATENCY_BUCKETS];
const NAME = 'eds_http_request_duration_seconds';
const HELP = 'HTTP request latency by route and status.';

/**
 * Observations with times on, just below and just above bounds, past the last, and zero; routes
 * and statuses interleaved, as answers come.
 */
const ANSWERS: Array<[string, number, number]> = [
  ['getEncounter', 200, 0.0005],
  ['getEncounter', 200, 0.00049],
  ['getEncounter', 200, 0.00051],
  ['getEncounter', 200, 0],
  ['getEncounter', 404, 0.003],
  ['listEncounters', 200, 0.0123],
  ['listEncounters', 200, 2.5],
  ['listEncounters', 200, 2.6],
  ['listEncounters', 401, 0.0001],
  ['getEncounter', 500, 0.2],
  ['media_host', 206, 0.07],
  ['getEncounter', 200, 0.004],
  ['media_host', 206, 1],
];

/** A histogram of the service's buckets, in a registry of its own. */
function histogramWithRegistry(): [RouteLatencyHistogram, Registry] {
  const registry = new Registry();
  return [
    new RouteLatencyHistogram({ name: NAME, help: HELP, buckets: BUCKETS, registers: [registry] }),
    registry,
  ];
}

test("happy: a scrape reads what prom-client's histogram writes for the same answers, byte for byte", async () => {
  const [histogram, ours] = histogramWithRegistry();
  const theirs = new Registry();
  const reference = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['route', 'status'],
    buckets: BUCKETS,
    registers: [theirs],
  });
  for (const [route, status, seconds] of ANSWERS) {
    histogram.observe(route, status, seconds);
    reference.observe({ route, status }, seconds);
  }
  const text = await ours.metrics();
  assert.equal(text, await theirs.metrics(), 'byte for byte, the order of series included');
  // As JSON too, exemplars aside (prom-client's buckets carry `exemplar: null`; none are kept).
  const asJson = async (registry: Registry) =>
    (await registry.getMetricsAsJSON())[0]!.values.map((v) => [
      (v as { metricName?: string }).metricName,
      v.labels,
      v.value,
    ]);
  assert.deepEqual(await asJson(ours), await asJson(theirs), 'and the same values as JSON');
  assert.match(text, /^# TYPE eds_http_request_duration_seconds histogram$/m);
  assert.match(
    text,
    /^eds_http_request_duration_seconds_bucket\{le="0.0005",route="getEncounter",status="200"\} 3$/m,
    'a time equal to a bound is counted in that bound',
  );
  assert.match(text, /^eds_http_request_duration_seconds_count\{route="listEncounters",status="200"\} 3$/m);
  assert.match(
    text,
    /^eds_http_request_duration_seconds_bucket\{le="\+Inf",route="listEncounters",status="200"\} 3$/m,
  );
  assert.match(
    text,
    /^eds_http_request_duration_seconds_bucket\{le="2.5",route="listEncounters",status="200"\} 2$/m,
  );
});

test('happy: answers keep adding up across scrapes, and a reset starts the series again', async () => {
  const [histogram, registry] = histogramWithRegistry();
  const count = async () => {
    const line = (await registry.metrics()).match(/_count\{route="getDocument",status="200"\} (\d+)/);
    return line === null ? undefined : Number(line[1]);
  };
  histogram.observe('getDocument', 200, 0.002);
  assert.equal(await count(), 1);
  assert.equal(await count(), 1, 'a scrape with nothing new changes nothing');
  histogram.observe('getDocument', 200, 0.004);
  assert.equal(await count(), 2);
  assert.match(await registry.metrics(), /_sum\{route="getDocument",status="200"\} 0.006$/m);
  registry.resetMetrics();
  assert.equal(await count(), undefined);
});

test('error: a time that is not a finite number is not counted, and does not spoil the sum', async () => {
  const [histogram, registry] = histogramWithRegistry();
  histogram.observe('getTranscript', 200, Number.NaN);
  histogram.observe('getTranscript', 200, Number.POSITIVE_INFINITY);
  histogram.observe('getTranscript', 200, 0.001);
  const text = await registry.metrics();
  assert.match(text, /_count\{route="getTranscript",status="200"\} 1$/m);
  assert.match(text, /_sum\{route="getTranscript",status="200"\} 0.001$/m);
});

test('error: bounds that do not ascend are refused when the histogram is made', () => {
  assert.throws(
    () => new RouteLatencyHistogram({ name: NAME, help: HELP, buckets: [0.1, 0.05], registers: [] }),
    /bucket bounds must ascend/,
  );
  assert.throws(
    () => new RouteLatencyHistogram({ name: NAME, help: HELP, buckets: [0.1, 0.1], registers: [] }),
    /bucket bounds must ascend/,
  );
});
