import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { isWellFormedToken } from '../../src/auth/token.js';
import { cliEnv, EDS_BIN, edsJson, runEds } from '../support/cli.js';
import { STARTUP_BOUND_MS } from '../support/processes.js';
import { createTestDatabase, type TestDatabase } from '../support/stores.js';

interface DemoOutput {
  base_url: string;
  api_key: string;
  organization_id: string;
  key_id: string;
  encounters: number;
  curl: string;
  examples: Record<string, { encounter_id: string; document_ids: string[] }>;
}

let database: TestDatabase;
let env: Record<string, string>;
before(async () => {
  database = await createTestDatabase('sqlite');
  env = cliEnv(database, { EDS_PUBLIC_BASE_URL: 'http://demo.example:9000' });
});
after(() => database.drop());

test('eds demo migrates, loads, and prints a working key and a curl line; a hint goes to stderr', async () => {
  const result = await runEds(['demo', '--encounters', '4', '--seed', '3'], env);
  assert.equal(result.code, 0, result.stderr);
  const demo = JSON.parse(result.stdout) as DemoOutput;
  assert.equal(demo.base_url, 'http://demo.example:9000');
  assert.ok(isWellFormedToken(demo.api_key));
  assert.match(demo.api_key, /^eds_live_/);
  assert.match(demo.organization_id, /^org_[0-9A-Za-z]{22}$/);
  assert.match(demo.key_id, /^key_/);
  assert.equal(demo.encounters, 4 + 6 + 3 * 24);
  assert.equal(
    demo.curl,
    `curl -H 'Authorization: Bearer ${demo.api_key}' 'http://demo.example:9000/external/v1/encounters?limit=2'`,
  );
  assert.match(result.stderr, /Demo data loaded/);
  assert.doesNotMatch(result.stderr, /\[#/, 'no progress bar when stderr is not a terminal');
});

test('a sandbox deployment gets an eds_test_ demo key; bad options are refused', async () => {
  const sandbox = await edsJson<DemoOutput>(['demo', '--encounters', '1'], {
    ...env,
    EDS_DEPLOYMENT_MODE: 'sandbox',
  });
  assert.match(sandbox.api_key, /^eds_test_/);
  assert.ok(isWellFormedToken(sandbox.api_key));
  const bad = await runEds(['demo', '--encounters', 'lots'], env);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /expected a whole number/);
});

test('eds serve answers with the demo key, and stops cleanly on SIGTERM', async () => {
  const demo = await edsJson<DemoOutput>(['demo', '--encounters', '2'], env);
  const child = spawn(process.execPath, [EDS_BIN, 'serve'], {
    env: { ...env, EDS_PORT: '0', EDS_MEDIA_PORT: '0', EDS_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const line = out.split('\n').find((l) => l.includes('api listening'));
        if (line) resolve(JSON.parse(line).url);
      });
      child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    const response = await fetch(`${url}/external/v1/encounters?limit=2`, {
      headers: { authorization: `Bearer ${demo.api_key}` },
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { items: unknown[]; total: number };
    assert.equal(body.items.length, 2);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, stderr);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

interface DemoServe {
  child: ChildProcess;
  /** The first line on standard output, or undefined when the process ended without one. */
  firstLine: string | undefined;
  stdout(): string;
  stderr(): string;
  closed: Promise<unknown>;
}

/** Starts `eds demo --serve` and resolves with its first line on standard output. */
async function startDemoServe(
  extraEnv: Record<string, string> = {},
  extraArgs: string[] = [],
): Promise<DemoServe> {
  const { EDS_PUBLIC_BASE_URL: _configured, ...withoutBaseUrl } = env;
  // Port 0: the API takes any free port, and the printed base URL is the one it got.
  const child = spawn(process.execPath, [EDS_BIN, 'demo', '--encounters', '2', '--serve', ...extraArgs], {
    env: { ...withoutBaseUrl, EDS_PORT: '0', EDS_MEDIA_PORT: '0', EDS_LOG_LEVEL: 'info', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const closed = once(child, 'close');
  const firstLine = new Promise<string>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
    });
  });
  // Only a hung start-up ends here; the test waits for the line, not for a time.
  const hung = setTimeout(() => child.kill('SIGKILL'), STARTUP_BOUND_MS);
  const line = await Promise.race([firstLine, closed.then(() => undefined)]);
  clearTimeout(hung);
  return { child, firstLine: line, stdout: () => stdout, stderr: () => stderr, closed };
}

async function stop(demo: DemoServe): Promise<number | null> {
  if (demo.child.exitCode === null) demo.child.kill('SIGTERM');
  await demo.closed;
  return demo.child.exitCode;
}

test('eds demo --serve prints its key as the first line once the API answers: its curl line works at once', async () => {
  const started = await startDemoServe();
  try {
    const demo = JSON.parse(started.firstLine ?? '') as DemoOutput;
    assert.doesNotMatch(demo.base_url, /:0$/, 'the base URL names the port the API got');
    // What a script does with that line, before any log line follows it.
    const response = await fetch(`${demo.base_url}/external/v1/encounters?limit=2`, {
      headers: { authorization: `Bearer ${demo.api_key}` },
    });
    assert.equal(response.status, 200);
    assert.equal(await stop(started), 0, started.stderr());
    assert.match(started.stderr(), /The API is listening: try its curl line/);
  } finally {
    started.child.kill('SIGKILL');
  }
});

test('start-up warnings follow the key: a data file open to other users, webhook delivery off', async () => {
  chmodSync(database.url, 0o644);
  const started = await startDemoServe({ EDS_WEBHOOKS_ENABLED: 'false' }, ['--worker']);
  try {
    assert.ok(JSON.parse(started.firstLine ?? '').api_key);
    assert.equal(await stop(started), 0, started.stderr());
    const messages = started
      .stdout()
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    assert.equal(messages[0], 'api listening');
    assert.ok(messages.some((m) => m.includes('open to other users')));
    assert.ok(messages.some((m) => m.includes('webhook delivery is off')));
  } finally {
    started.child.kill('SIGKILL');
    chmodSync(database.url, 0o600);
  }
});

test('eds demo --serve on a port that is taken still prints the key it stored, then fails', async () => {
  const taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  try {
    const port = (taken.address() as AddressInfo).port;
    const started = await startDemoServe({ EDS_PORT: String(port) });
    await started.closed;
    assert.notEqual(started.child.exitCode, 0);
    const demo = JSON.parse(started.firstLine ?? '') as DemoOutput;
    assert.ok(isWellFormedToken(demo.api_key));
    assert.equal(demo.curl, undefined, 'no curl line for an API that does not answer');
    assert.match(started.stderr(), /The API did not start/);
    assert.match(started.stderr(), /cannot listen: .*EADDRINUSE/);
  } finally {
    taken.close();
  }
});
