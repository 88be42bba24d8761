/**
 * Connection exhaustion (decisions.md, Hardening): thousands of sockets opened and left idle, on
 * the API and media ports, while a partner keeps calling with its key. The process holds at most
 * EDS_MAX_CONNECTIONS, closes the longest-idle to admit each newcomer, counts and logs it once,
 * and the partner is served throughout. Idle keep-alive connections close on their own after
 * EDS_KEEP_ALIVE_TIMEOUT_MS, which the Keep-Alive header announces.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config.js';
import { testClock } from '../support/clock.js';
import { TEST_DIGEST_SECRET, TEST_MEDIA_SECRET } from '../support/fixtures.js';
import { rawRequest, requestText } from '../support/rawHttp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { useServerWithWorld } from '../support/serverWithWorld.js';
import { forEachStore } from '../support/stores.js';
import { waitFor } from '../support/waitFor.js';
import { pathFor } from '../support/world.js';

const MAX_CONNECTIONS = 300;
/** Idle sockets opened in all: ten times the bound, within this machine's descriptor limit. */
const IDLE_SOCKETS = 3000;
const BATCH = 100;
/**
 * An upper bound only, which load cannot reach: a keyed answer takes tens of milliseconds during
 * the flood (a few hundred on a busy machine); a client locked out would be refused, or wait for
 * idle sockets to time out (ten minutes here).
 */
const SERVED_WITHIN_MS = 10_000;

const IDLE_SOCKETS_CLIENT = fileURLToPath(new URL('./fixtures/idleSockets.mjs', import.meta.url));

/** The probe's other client, in a process of its own; its output lines, as they come. */
function startIdleSockets(urls: string[]) {
  const child = spawn(process.execPath, [IDLE_SOCKETS_CLIENT, String(IDLE_SOCKETS), String(BATCH), ...urls], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  child.stdout
    .setEncoding('utf8')
    .on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    lines,
    /** How many of its sockets the server has closed, as the client saw it. */
    async closedByServer(): Promise<number> {
      const asked = lines.length;
      child.stdin.write('?\n');
      await waitFor(() => lines.slice(asked).some((line) => line.startsWith('closed ')), 'its answer');
      return Number(
        lines
          .slice(asked)
          .find((line) => line.startsWith('closed '))!
          .split(' ')[1],
      );
    },
    async stop(): Promise<void> {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

async function openConnections(server: TestServer): Promise<Record<string, number>> {
  const { values } = await server.services.metrics.openConnections.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.port), v.value]));
}

async function shedTotal(server: TestServer): Promise<number> {
  const { values } = await server.services.metrics.connectionsShed.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

forEachStore('connection bounds', (kind) => {
  const given = useServerWithWorld(kind, {
    // A fixed clock: the warning is logged once a minute at most, and this minute never ends.
    clock: testClock().now,
    env: {
      EDS_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      // Idle sockets stay open unless the bound closes them: this test is about the bound.
      EDS_KEEP_ALIVE_TIMEOUT_MS: '600000',
      // The keyed answers' time is the connections' part, not a disk flush's (SQLite).
      EDS_AUDIT_SQLITE_SYNCHRONOUS: 'normal',
    },
  });

  test('security: thousands of idle sockets do not lock out a keyed client; the longest-idle are closed, counted and logged once', async () => {
    const keyed = requestText(`GET ${pathFor('listEncounters', given.world)}?limit=1 HTTP/1.1`, [
      'Host: 127.0.0.1',
      `Authorization: Bearer ${given.world.token}`,
    ]);
    assert.equal((await rawRequest(given.server.url, keyed)).status, 200, 'served before the flood');

    // Batches alternate between the API and the media port: the bound is the process's.
    const flood = startIdleSockets([given.server.url, given.server.mediaUrl!]);
    const latencies: number[] = [];
    const statuses = new Set<number>();
    let peak = 0;
    try {
      while (!flood.lines.includes('done') || latencies.length < 20) {
        const sent = performance.now();
        const answer = await rawRequest(given.server.url, keyed);
        latencies.push(performance.now() - sent);
        statuses.add(answer.status);
        const open = Object.values(await openConnections(given.server)).reduce((a, b) => a + b, 0);
        peak = Math.max(peak, open);
      }
      await waitFor(
        async () => (await flood.closedByServer()) >= IDLE_SOCKETS - MAX_CONNECTIONS,
        'the client to see its longest-idle sockets closed',
      );
      const open = Object.values(await openConnections(given.server)).reduce((a, b) => a + b, 0);
      assert.ok(open <= MAX_CONNECTIONS, `${open} open at the end`);
    } finally {
      await flood.stop();
    }

    assert.deepEqual([...statuses], [200], 'every keyed request was served');
    const slowest = Math.max(...latencies);
    assert.ok(slowest < SERVED_WITHIN_MS, `the slowest keyed answer took ${slowest.toFixed(0)} ms`);
    assert.ok(peak <= MAX_CONNECTIONS, `at most ${MAX_CONNECTIONS} open, saw ${peak}`);
    assert.ok((await shedTotal(given.server)) >= IDLE_SOCKETS - MAX_CONNECTIONS);
    const warnings = given.server.logs.filter((line) => line.includes('connection limit reached'));
    assert.equal(warnings.length, 1, 'one line, however many connections were closed');
    assert.match(warnings[0]!, /"max_connections":300/);
    assert.doesNotMatch(warnings[0]!, /127\.0\.0\.1/, 'no client address in the line');
    await waitFor(async () => {
      const open = await openConnections(given.server);
      return (open.api ?? 0) === 0 && (open.media ?? 0) === 0;
    }, 'the gauge to fall back to zero once the sockets are gone');
    console.log(
      `# ${IDLE_SOCKETS} idle sockets, bound ${MAX_CONNECTIONS}: ${latencies.length} keyed requests, ` +
        `median ${median(latencies).toFixed(1)} ms, slowest ${slowest.toFixed(1)} ms`,
    );
  });
});

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

test('an idle keep-alive connection is closed after EDS_KEEP_ALIVE_TIMEOUT_MS, which Keep-Alive announces', async () => {
  const quick = await startTestServer('sqlite', { env: { EDS_KEEP_ALIVE_TIMEOUT_MS: '1000' } });
  const usual = await startTestServer('sqlite');
  try {
    // No `Connection: close`: each answer resolves only once the server closes the idle socket.
    const keptAlive = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const answer = await rawRequest(quick.url, keptAlive);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['keep-alive'], 'timeout=1');
    const byDefault = await rawRequest(usual.url, keptAlive);
    assert.equal(byDefault.headers['keep-alive'], 'timeout=5');
  } finally {
    await quick.close();
    await usual.close();
  }
});

test('error: connection settings are validated at start-up', () => {
  const env = {
    EDS_KEY_DIGEST_SECRET: TEST_DIGEST_SECRET,
    EDS_MEDIA_SIGNING_SECRET: TEST_MEDIA_SECRET,
    EDS_MAX_CONNECTIONS: '0',
    EDS_KEEP_ALIVE_TIMEOUT_MS: 'soon',
  };
  assert.throws(
    () => loadConfig(env),
    (error: unknown) =>
      error instanceof ConfigError &&
      /EDS_MAX_CONNECTIONS must be a whole number from 16/.test(error.message) &&
      /EDS_KEEP_ALIVE_TIMEOUT_MS must be a whole number from 100/.test(error.message),
  );
  const config = loadConfig({ ...env, EDS_MAX_CONNECTIONS: '2000', EDS_KEEP_ALIVE_TIMEOUT_MS: '2500' });
  assert.equal(config.http.maxConnections, 2000);
  assert.equal(config.http.keepAliveTimeoutMs, 2500);
});
