/**
 * The SQLite binding must survive garbage collections that finalize statements outside
 * JavaScript. A binding whose objects derive from node::ObjectWrap (better-sqlite3 12 and older)
 * aborts the whole process there on Node.js 24.19 and later (`Assertion failed: (env) != nullptr`
 * in Statement::~Statement): at an arbitrary moment in a server, after some reads. This runs a
 * real `eds serve` under a steady stream of such collections on whatever runtime runs the suite.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cliEnv, edsJson } from '../support/cli.js';
import { startServeProcess } from '../support/processes.js';
import { createTestDatabase, type TestDatabase } from '../support/stores.js';

const PRELOAD = fileURLToPath(new URL('../support/asyncGcPressure.mjs', import.meta.url));
/** Answers, each followed by a collection: the old binding aborted long before the first hundred. */
const ANSWERS = 400;

interface Demo {
  api_key: string;
  examples: Record<string, { encounter_id: string; document_ids: string[] }>;
}

let database: TestDatabase;
let env: Record<string, string>;
let demo: Demo;
before(async () => {
  database = await createTestDatabase('sqlite');
  env = cliEnv(database);
  demo = await edsJson<Demo>(['demo', '--encounters', '30', '--seed', '5'], env);
});
after(() => database.drop());

test('happy: a server keeps answering every route while collections finalize statements outside JavaScript, then exits 0', async () => {
  const server = await startServeProcess({
    ...env,
    NODE_OPTIONS: `--expose-gc --import ${PRELOAD}`,
    EDS_GC_PRESSURE_DB: database.url,
    EDS_RATE_LIMIT_PER_KEY: '1000000',
    EDS_RATE_LIMIT_BURST: '1000000',
  });
  const { encounter_id: enc, document_ids: docs } = demo.examples.complete!;
  const auth = { authorization: `Bearer ${demo.api_key}` };
  const paths = [
    '/external/v1/encounters?limit=5',
    `/external/v1/encounters?limit=3&offset=7&sort_order=asc`,
    `/external/v1/encounters/${enc}`,
    ...docs.map((doc) => `/external/v1/encounters/${enc}/documents/${doc}`),
  ];
  const statuses = new Map<number, number>();
  try {
    for (let i = 0; i < ANSWERS; i++) {
      const response = await fetch(`${server.url}${paths[i % paths.length]}`, { headers: auth });
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  } finally {
    assert.equal(await server.stop('SIGTERM'), 0, `the server exited cleanly: ${server.stderr()}`);
  }
  assert.deepEqual([...statuses.keys()], [200], 'every answer was a 200');
  assert.doesNotMatch(server.stderr(), /Assertion failed/);
  const collections = Number(/async collections: (\d+)/.exec(server.stderr())?.[1] ?? 0);
  assert.ok(collections >= ANSWERS / 2, `collections ran between answers (${collections})`);
});
