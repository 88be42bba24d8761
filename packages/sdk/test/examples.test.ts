/**
 * The examples run as a partner would run them (`node --import tsx examples/….ts`, configured
 * through the environment) against the real server on loopback.
 * sync.ts: a first run writes every visible encounter once; a rerun resumes from the checkpoint
 * and writes nothing again; encounters created later (including one inside the overlap) are
 * picked up exactly once. receiver.ts: a signed delivery gets 204, the follow-up routes are
 * fetched, a redelivery is skipped, a forged one is refused.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildWorld, startTestServer, type TestServer, type World } from '@eds/server/test-kit';
import { signWebhook } from '../src/webhooks/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
// The scripts run from a scratch folder, so tsx is named by its resolved location.
const TSX = import.meta.resolve('tsx');

let server: TestServer;
let dir: string;
before(async () => {
  server = await startTestServer('sqlite');
  dir = mkdtempSync(join(tmpdir(), 'eds-examples-'));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(
  script: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'examples', script), ...args], {
      cwd: dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('exit', (code) => done({ code: code ?? 1, stderr }));
  });
}

describe('examples/sync.ts', () => {
  it('syncs every encounter once, resumes from its checkpoint, and picks up later ones once', async () => {
    const f = server.fixtures;
    const org = await f.organization();
    const patient = await f.patient(org);
    const base = Date.parse('2026-04-01T00:00:00.000Z');
    const created: string[] = [];
    // 130 encounters over ~4 days with ties: several windows, several pages each.
    for (let i = 0; i < 130; i++) {
      created.push(
        await f.encounter(org, { patientId: patient, createdAt: base + Math.floor(i / 2) * 90 * 60_000 }),
      );
    }
    await f.encounter(org, { patientId: patient, createdAt: base + 3_600_000, demoTraining: true });
    const { token } = await f.key(org);
    const env = { EDS_BASE_URL: server.url, EDS_API_KEY: token };
    const args = ['--window-hours', '12', '--overlap-minutes', '120', '--until', '2026-04-10T00:00:00Z'];
    const lines = () =>
      readFileSync(join(dir, 'encounters.ndjson'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).encounter_id as string);

    const first = await run('sync.ts', env, args);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(lines().sort(), [...created].sort());
    assert.match(first.stderr, /130 new encounters/);
    assert.ok(!first.stderr.includes(token));

    const again = await run('sync.ts', env, args);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /0 new encounters/);
    assert.equal(lines().length, 130);

    // One late arrival inside the overlap, one after the cursor.
    const late = await f.encounter(org, {
      patientId: patient,
      createdAt: Date.parse('2026-04-09T23:00:00Z'),
    });
    const newer = await f.encounter(org, {
      patientId: patient,
      createdAt: Date.parse('2026-04-10T06:00:00Z'),
    });
    const third = await run('sync.ts', env, [
      '--window-hours',
      '12',
      '--overlap-minutes',
      '120',
      '--until',
      '2026-04-11T00:00:00Z',
    ]);
    assert.equal(third.code, 0, third.stderr);
    assert.equal(lines().length, 132);
    assert.deepEqual(lines().slice(-2).sort(), [late, newer].sort());
    const checkpoint = JSON.parse(readFileSync(join(dir, 'eds-sync.checkpoint.json'), 'utf8'));
    assert.equal(checkpoint.cursor, '2026-04-11T00:00:00.000Z');
  });

  it('stops with the reason code (not the key) when the key is refused', async () => {
    const result = await run('sync.ts', { EDS_BASE_URL: server.url, EDS_API_KEY: 'eds_live_not-valid' }, [
      '--checkpoint',
      'other.json',
    ]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /401 malformed_token/);
    assert.ok(!result.stderr.includes('eds_live_not-valid'));
  });
});

describe('examples/receiver.ts', () => {
  let world: World;
  let child: ChildProcess;
  let logs = '';
  let url: string;
  const secret = 'whsec_example_receiver';
  const previousSecret = 'whsec_example_receiver_before_rotation';

  before(async () => {
    world = await buildWorld(server.fixtures, server.putObject);
    child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'examples', 'receiver.ts'), '--port', '0'], {
      env: {
        ...process.env,
        EDS_BASE_URL: server.url,
        EDS_API_KEY: world.token,
        EDS_WEBHOOK_SECRET: secret,
        EDS_WEBHOOK_SECRET_PREVIOUS: previousSecret,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk) => {
      logs += chunk;
    });
    url = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`receiver did not start: ${logs}`)), 120_000);
      const check = () => {
        const match = /"url":"([^"]+)"/.exec(logs);
        if (match) {
          clearTimeout(timer);
          done(match[1]!);
        } else setTimeout(check, 20);
      };
      check();
    });
  });
  after(() => {
    child.kill('SIGTERM');
  });

  const delivery = (id: string, signingSecret = secret) => {
    const event = {
      id,
      type: 'recording.transcript_ready',
      api_version: '2026-05-01',
      occurred_at: new Date().toISOString(),
      organization_id: world.orgA,
      resources: { encounter_id: world.encounter, document_id: world.ambient },
    };
    return signWebhook({ event, secret: signingSecret });
  };
  const post = (signed: ReturnType<typeof delivery>) =>
    fetch(url, { method: 'POST', headers: signed.headers, body: signed.rawBody as string });

  async function waitForLog(pattern: RegExp) {
    const until = Date.now() + 10_000;
    while (!pattern.test(logs)) {
      if (Date.now() > until) throw new Error(`no ${pattern} in: ${logs}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('verifies, answers 204, fetches the follow-up routes once per event id', async () => {
    const first = await post(delivery('evt_example_1'));
    assert.equal(first.status, 204);
    await waitForLog(/"message":"processed","eventId":"evt_example_1"/);
    assert.match(logs, /"turns":2/);
    assert.match(logs, /"audio":"link valid until/);
    assert.equal((await post(delivery('evt_example_1'))).status, 204);
    // A later event processed: the redelivery, answered and handed to the work first, had its
    // turn before it.
    assert.equal((await post(delivery('evt_example_1_later'))).status, 204);
    await waitForLog(/"message":"processed","eventId":"evt_example_1_later"/);
    assert.equal(
      logs.match(/"message":"processed","eventId":"evt_example_1"/g)?.length,
      1,
      'the redelivery was skipped',
    );
    assert.ok(!/sig=|signature=|\/media\//.test(logs), 'no signed link in the logs');
  });

  it('during a secret rotation accepts deliveries signed with the previous secret too', async () => {
    assert.equal((await post(delivery('evt_example_3', previousSecret))).status, 204);
    await waitForLog(/"message":"processed","eventId":"evt_example_3"/);
  });

  it('refuses a forged delivery', async () => {
    const forged = delivery('evt_example_2');
    forged.headers['Eds-Signature'] = `v1=${'0'.repeat(64)}`;
    assert.equal((await post(forged)).status, 401);
    await waitForLog(/delivery rejected/);
  });
});
