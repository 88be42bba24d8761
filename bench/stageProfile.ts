/**
 * A V8 CPU profile of the service under load, as time per request by stage: each sample is
 * charged to the stage of the innermost frame of its stack that names one (the store's driver
 * called from a route is the read, not the route; the socket write called from Fastify's reply
 * is the write), and only samples inside the measured window count.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export const STAGES = [
  'HTTP parse',
  'routing',
  'hooks',
  'request ID',
  'authentication',
  'rate limit',
  'read',
  'assembly',
  'audit hand-over',
  'serialization',
  'headers',
  'write',
  'logging and metrics',
  'framework, other',
  'promises and timers',
  'GC',
  'VM, unattributed',
] as const;

export type Stage = (typeof STAGES)[number];

/** Functions of Node's HTTP response that build or set the header block. */
const HEADER_FUNCTIONS = new Set([
  'setHeader',
  'setHeaders',
  'getHeader',
  'removeHeader',
  'hasHeader',
  'writeHead',
  '_storeHeader',
  'processHeader',
  'storeHeader',
  '_implicitHeader',
  'validateHeaderName',
  'validateHeaderValue',
  'checkInvalidHeaderChar',
  'checkIsHttpToken',
]);

/** Fastify's reply functions by what they do for the request. */
const FASTIFY_REPLY: Record<string, Stage> = {
  header: 'headers',
  headers: 'headers',
  getHeader: 'headers',
  removeHeader: 'headers',
  type: 'headers',
  serialize: 'serialization',
  onSendEnd: 'write',
  sendTrailer: 'write',
  onResponseCallback: 'write',
};

const FASTIFY_FILES: Record<string, Stage> = {
  'hooks.js': 'hooks',
  'route.js': 'routing',
  'logger-factory.js': 'logging and metrics',
  'logger-pino.js': 'logging and metrics',
};

const OUR_FILES: [RegExp, Stage][] = [
  [/\/plugins\/observe\.|\/logger\.|\/metrics\./, 'logging and metrics'],
  [/\/audit\/|\/plugins\/audit/, 'audit hand-over'],
  [/\/rateLimit\/|\/plugins\/rateLimit\./, 'rate limit'],
  // The HMAC digests the API key (it also signs audio links, not among the profiled routes).
  [/\/auth\/|\/plugins\/authorize\.|\/plugins\/keyDeadlineHeader\.|\/hmacSha256\./, 'authentication'],
  // The read model's queries and the prepared statements that run them (SQLite's own work shows
  // as the frame that called the native statement).
  [/\/store\/|\/readModel\/read\/|\/database\//, 'read'],
  [/\/domain\/|\/storedAnswer\.|\/pagingLinks\.|\/routes\/|\/problem\.|\/entityTags\./, 'assembly'],
  [/\/plugins\/|\/rewriteUrl\./, 'hooks'],
  [/\/http\/(listener|connectionLimit)\./, 'HTTP parse'],
  [/\/ids\./, 'request ID'],
];

const STORE_DRIVERS =
  /node_modules\/(better-sqlite3|kysely|pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+)\//;

/** Stages of Node's own socket and stream code, which the store's driver uses too. */
const SOCKET_STAGES: ReadonlySet<Stage> = new Set(['write', 'HTTP parse', 'promises and timers']);

const PACKAGES: [RegExp, Stage][] = [
  [/node_modules\/(prom-client|pino|sonic-boom|fast-redact|tdigest|bintrees)\//, 'logging and metrics'],
  [STORE_DRIVERS, 'read'],
  [/node_modules\/ioredis\//, 'rate limit'],
  [
    /node_modules\/(fast-json-stringify|@fastify\/fast-json-stringify-compiler|json-schema-ref-resolver)\//,
    'serialization',
  ],
  [/node_modules\/find-my-way\//, 'routing'],
];

/** The stage one frame names, or undefined when its caller's frame must decide. */
export function stageOfFrame(name: string, url: string): Stage | undefined {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)') return 'VM, unattributed';
  if (name === 'genReqId') return 'request ID';
  // Observers of garbage collections (the service's, with EDS_METRICS_GC_PAUSES on).
  if (url === 'node:internal/perf/observe') return 'logging and metrics';
  for (const [pattern, stage] of PACKAGES) if (pattern.test(url)) return stage;
  const fastify = /node_modules\/fastify\/lib\/([^/]+)$/.exec(url)?.[1];
  if (fastify !== undefined) {
    // Methods are named `Reply.header`: the part after the class names the function.
    if (fastify === 'reply.js') return FASTIFY_REPLY[name.slice(name.indexOf('.') + 1)] ?? 'framework, other';
    return FASTIFY_FILES[fastify] ?? 'framework, other';
  }
  if (url.includes('/packages/server/')) {
    for (const [pattern, stage] of OUR_FILES) if (pattern.test(url)) return stage;
    return 'framework, other';
  }
  if (url === 'node:_http_outgoing') return HEADER_FUNCTIONS.has(name) ? 'headers' : 'write';
  if (url === 'node:_http_server') {
    if (HEADER_FUNCTIONS.has(name)) return 'headers';
    return /^(resOnFinish|onFinish|end|write|ServerResponse|emitCloseNT)/.test(name) ? 'write' : 'HTTP parse';
  }
  if (url === 'node:_http_common' || url === 'node:_http_incoming') return 'HTTP parse';
  if (name === 'onStreamRead') return 'HTTP parse';
  if (/^node:(net|stream|internal\/stream|internal\/streams)/.test(url)) return 'write';
  if (/^node:internal\/(process\/task_queues|timers|async_hooks)|^node:timers/.test(url))
    return 'promises and timers';
  return undefined;
}

export interface StageCost {
  /** µs of the profiled thread per request served in the window, by stage. */
  perRequest: Record<Stage, number>;
  /** µs per request in all (busy time only: idle samples excluded). */
  total: number;
  /** µs per request the thread was idle in the window (requests waiting on something else). */
  idle: number;
  /** Whether the samples could be placed in the window (else the whole profile counted). */
  windowed: boolean;
}

/**
 * `window` is [start, end] in µs of the monotonic clock (process.hrtime), which V8 stamps its
 * samples with too; `requests` is how many the load generator counted in it.
 */
export function stageCost(json: string, window: [number, number], requests: number): StageCost {
  const profile = JSON.parse(json) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageOfNode = new Map<number, Stage>();
  const underDriver = new Map<number, boolean>();
  // Whether a store driver's frame is on the stack at or above this node.
  const isUnderDriver = (id: number | undefined): boolean => {
    if (id === undefined) return false;
    const known = underDriver.get(id);
    if (known !== undefined) return known;
    const under = STORE_DRIVERS.test(nodes.get(id)!.callFrame.url) || isUnderDriver(parent.get(id));
    underDriver.set(id, under);
    return under;
  };
  const resolve = (id: number): Stage => {
    const known = stageOfNode.get(id);
    if (known) return known;
    const { functionName, url } = nodes.get(id)!.callFrame;
    const own = stageOfFrame(functionName, url);
    const up = parent.get(id);
    let stage = own ?? (up === undefined ? 'VM, unattributed' : resolve(up));
    // A socket write on behalf of the PostgreSQL driver is part of the read, not the answer.
    if (SOCKET_STAGES.has(stage) && isUnderDriver(id)) stage = 'read';
    stageOfNode.set(id, stage);
    return stage;
  };
  const end = profile.startTime + profile.timeDeltas.reduce((a, b) => a + b, 0);
  const windowed = window[0] >= profile.startTime && window[1] <= end;
  const sums = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  let at = profile.startTime;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (windowed && (at < window[0] || at > window[1])) return;
    if (nodes.get(id)!.callFrame.functionName === '(idle)') idle += delta;
    else sums[resolve(id)] += delta;
  });
  const perRequest = Object.fromEntries(STAGES.map((s) => [s, sums[s] / requests])) as Record<Stage, number>;
  const total = STAGES.reduce((a, s) => a + perRequest[s], 0);
  return { perRequest, total, idle: idle / requests, windowed };
}
