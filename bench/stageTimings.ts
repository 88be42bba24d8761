/**
 * Each stage of a request run alone, in this process, on the real code paths and a real data
 * set: many iterations per round, the median of the rounds' µs per operation. The HTTP layer's
 * own work (parse, headers, write) is what a whole request through the socket costs beyond a
 * whole request injected into the app without one (`inject`), measured in the same process.
 */
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { type Caller, requestCredentials, verifyApiKey } from '../packages/server/src/auth/verifyApiKey.js';
import { loadConfig } from '../packages/server/src/config.js';
import { LIST_QUERY } from '../packages/server/src/contract/listQuery.js';
import { getEncounter, listEncounters } from '../packages/server/src/domain/encounters.js';
import { ApiError } from '../packages/server/src/domain/errors.js';
import { listPageOf } from '../packages/server/src/domain/listQuery.js';
import { type ApiContext, createApiContext } from '../packages/server/src/http/apiContext.js';
import { buildApp } from '../packages/server/src/http/app.js';
import { connectionLimitFor } from '../packages/server/src/http/connectionLimit.js';
import { newId } from '../packages/server/src/ids.js';
import { createLogger } from '../packages/server/src/logger.js';
import { HTTP_LATENCY_BUCKETS } from '../packages/server/src/metrics.js';
import { Buckets } from '../packages/server/src/rateLimit/buckets.js';
import { rateLimitFields } from '../packages/server/src/rateLimit/fields.js';
import { RequestLimits } from '../packages/server/src/rateLimit/requestLimits.js';
import { createServices, type Services } from '../packages/server/src/services.js';
import type { AuditRecord } from '../packages/server/src/store/auditRows.js';
import { MALFORMED_TOKEN } from './datasets.js';

export interface StageTiming {
  stage: string;
  what: string;
  /** Median over rounds of µs per operation. */
  us: number;
}

const ROUNDS = 7;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** µs per call of a synchronous operation. */
function timeSync(iterations: number, run: (i: number) => unknown): number {
  for (let i = 0; i < iterations / 10; i++) run(i);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) run(i);
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / iterations);
  }
  return median(rounds);
}

/** µs of wall time per operation with `inFlight` operations outstanding at once. */
async function timeAsync(
  iterations: number,
  inFlight: number,
  run: (i: number) => Promise<unknown>,
): Promise<number> {
  const once = async () => {
    let next = 0;
    const start = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < iterations) await run(next++);
      }),
    );
    return Number(process.hrtime.bigint() - start) / 1000 / iterations;
  };
  await once();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await once());
  return median(rounds);
}

const discard = () =>
  new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });

function auditRecord(caller: Caller, encounterId: string): AuditRecord {
  return {
    at: Date.now(),
    request_id: newId('req'),
    organization_id: caller.organizationId,
    key_id: caller.keyId,
    method: 'GET',
    route: 'getEncounter',
    encounter_id: encounterId,
    document_id: null,
    status: 200,
    reason_code: null,
    duration_ms: 0.5,
    patient_ids: ['pat_0000000000000000000000'],
  };
}

export interface StageInput {
  env: Record<string, string>;
  token: string;
  encounterId: string;
  /** How many keyed requests are in flight at once (the load generator's connections). */
  connections: number;
}

/** Every stage alone; the audit rows it commits go to the data set's audit log, as serving does. */
export async function timeStages(input: StageInput): Promise<StageTiming[]> {
  const config = loadConfig({ ...input.env, EDS_LOG_LEVEL: 'warn' }, process.cwd());
  const services: Services = createServices(config);
  const context: ApiContext = createApiContext(services);
  await context.ready();
  const app: FastifyInstance = await buildApp(context, connectionLimitFor(services));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const timings: StageTiming[] = [];
  const add = (stage: string, what: string, us: number) => timings.push({ stage, what, us });
  try {
    const rawHeaders = ['Host', 'localhost', 'Authorization', `Bearer ${MALFORMED_TOKEN}`];
    const caller = await verifyApiKey(context.verifyDeps, input.token);

    add(
      'request ID',
      'newId(req): 22 base62 characters from pooled CSPRNG bytes',
      timeSync(200_000, () => newId('req')),
    );
    add(
      'authentication',
      'malformed key: credentials from raw headers, checksum, the ApiError',
      // The refusal is a rejected promise (verifyApiKey is async), counted with its handler.
      timeSync(50_000, () =>
        verifyApiKey(context.verifyDeps, requestCredentials(rawHeaders)).catch(() => undefined),
      ),
    );
    add(
      'authentication',
      'an ApiError alone (it captures no stack)',
      timeSync(100_000, () => new ApiError('malformed_token', 'x')),
    );
    add(
      'authentication',
      'known key: digest and key cache',
      await timeAsync(50_000, 1, () => verifyApiKey(context.verifyDeps, input.token)),
    );
    const limits = new RequestLimits(
      { ...config.rateLimits, perKey: 1e9, burst: 1e9, redisUrl: undefined },
      new Buckets({ redisUrl: undefined, redisCommandTimeoutMs: 100 }, services.logger, services.metrics),
      services.metrics,
    );
    add(
      'rate limit',
      'key bucket in process, with its RateLimit fields',
      timeSync(200_000, (i) => {
        const limit = limits.chargeKey(caller.keyId, caller.record.organization, i, rateLimitFields);
        if (limit && !(limit instanceof Promise)) rateLimitFields(limit);
      }),
    );
    const db = services.store.db;
    add(
      'read + assembly',
      'encounter detail: stored answer by ID',
      await timeAsync(20_000, 1, () => getEncounter(db, caller, input.encounterId)),
    );
    const page = listPageOf({ limit: 50, offset: 0, sort_order: LIST_QUERY.defaultSort });
    add(
      'read + assembly',
      'list page of 50, offset 0, with its total',
      await timeAsync(2_000, 1, () => listEncounters(db, caller, page)),
    );
    add(
      'audit hand-over',
      `group commit, ${input.connections} waiting at once: wall µs per record`,
      await timeAsync(20_000, input.connections, () =>
        context.durableAudit.commit(auditRecord(caller, input.encounterId)),
      ),
    );
    const { httpDuration, responses } = services.metrics;
    add(
      'logging and metrics',
      'latency histogram and response counter, as each answer records them (cells)',
      timeSync(200_000, (i) => {
        httpDuration.observe('getEncounter', 200, (i % 10) / 1000);
        responses.count('getEncounter', 200, '');
      }),
    );
    const promHistogram = new Histogram({
      name: 'latency',
      help: 'prom-client alone',
      labelNames: ['route', 'status'],
      buckets: [...HTTP_LATENCY_BUCKETS],
      registers: [],
    });
    const promCounter = new Counter({
      name: 'responses',
      help: 'prom-client alone',
      labelNames: ['route', 'status', 'reason_code'],
      registers: [],
    });
    add(
      'logging and metrics',
      "the same two as prom-client's histogram and counter, labels looked up",
      timeSync(200_000, (i) => {
        promHistogram.observe({ route: 'getEncounter', status: 200 }, (i % 10) / 1000);
        promCounter.inc({ route: 'getEncounter', status: 200, reason_code: '' });
      }),
    );
    const infoLogger = createLogger('info', discard());
    add(
      'logging and metrics',
      'request line at level info (a child per request, to a discarding stream)',
      timeSync(50_000, (i) =>
        infoLogger.child({ req_id: 'req_0000000000000000000000' }).info(
          {
            method: 'GET',
            route: 'getEncounter',
            path: '/external/v1/encounters/x',
            status: 200,
            duration_ms: i,
          },
          'request',
        ),
      ),
    );
    const warnLogger = createLogger('warn', discard());
    add(
      'logging and metrics',
      "the same at level warn (the benchmark's): child only",
      timeSync(200_000, (i) =>
        warnLogger.child({ req_id: 'req_0000000000000000000000' }).info({ duration_ms: i }, 'request'),
      ),
    );

    const routes: [string, string, string][] = [
      ['401, malformed key', '/external/v1/encounters?limit=50', MALFORMED_TOKEN],
      ['encounter detail', `/external/v1/encounters/${input.encounterId}`, input.token],
      ['list, offset 0', '/external/v1/encounters?limit=50', input.token],
    ];
    const { port } = app.server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: input.connections });
    for (const [name, url, token] of routes) {
      const headers = { authorization: `Bearer ${token}` };
      const injected = await timeAsync(5_000, input.connections, () => app.inject({ url, headers }));
      add('whole request', `${name}: injected (no socket), ${input.connections} in flight`, injected);
      const overSocket = await timeAsync(5_000, input.connections, () => get(agent, port, url, headers));
      add('whole request', `${name}: over a socket (client in the same process)`, overSocket);
    }
    agent.destroy();
  } finally {
    await app.close();
    await context.close();
    await services.close();
  }
  return timings;
}

function get(agent: Agent, port: number, path: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ agent, host: '127.0.0.1', port, path, headers }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end();
  });
}
