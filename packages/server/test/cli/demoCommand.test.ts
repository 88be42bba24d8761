import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { isWellFormedToken } from '../../src/auth/token.js';
import { cliEnv, EDS_BIN, edsJson, runEds } from '../support/cli.js';
import { freePort } from '../support/processes.js';
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

/** Starts `eds demo --serve` on free ports; resolves with its first line on standard output. */
async function startDemoServe(): Promise<{ child: ChildProcess; firstLine: string; stderr: () => string }> {
  // Another process may take a free port before the child binds it: then try fresh ones.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [EDS_BIN, 'demo', '--encounters', '2', '--serve'], {
      env: {
        ...env,
        EDS_PORT: String(port),
        EDS_MEDIA_PORT: String(await freePort()),
        EDS_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        EDS_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    try {
      const firstLine = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
        });
        child.on('exit', (code) => reject(new Error(`demo exited ${code}: ${stderr}`)));
      });
      return { child, firstLine, stderr: () => stderr };
    } catch (error) {
      if (!/cannot listen: .*EADDRINUSE/.test(stderr) || attempt === 5) throw error;
    }
  }
}

test('eds demo --serve prints its key as the first line once the API answers: its curl line works at once', async () => {
  const { child, firstLine, stderr } = await startDemoServe();
  try {
    const demo = JSON.parse(firstLine) as DemoOutput;
    // What a script does with that line, before any log line follows it.
    const response = await fetch(`${demo.base_url}/external/v1/encounters?limit=2`, {
      headers: { authorization: `Bearer ${demo.api_key}` },
    });
    assert.equal(response.status, 200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, stderr());
    assert.match(stderr(), /The API is listening: try the curl line above/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
