/**
 * The client against the real server (SQLite, loopback): every route, every reason code a
 * client call can meet surfacing as EdsApiError with the right status and code, retries on 503
 * only, and walks across many pages, including past the 10,000 offset cap.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AUDIO_BYTES,
  applyReadModelChanges,
  buildWorld,
  generateToken,
  StorageUnavailableError,
  startTestServer,
  type TestServer,
  upsertEncounters,
  type World,
} from '@eds/server/test-kit';
import {
  AudioLink,
  EdsApiError,
  EncounterDataClient,
  type EncounterDataClientOptions,
  REASON_CODES,
} from '../src/index.js';

let server: TestServer;
let world: World;
before(async () => {
  server = await startTestServer('sqlite');
  world = await buildWorld(server.fixtures, server.putObject);
});
after(() => server.close());

function client(apiKey = world.token, options: Partial<EncounterDataClientOptions> = {}) {
  return new EncounterDataClient({ baseUrl: server.url, apiKey, retryBaseDelayMs: 1, ...options });
}

/** A fetch that counts attempts, optionally rewriting each request first. */
function countingFetch(
  rewrite: (url: string, init: RequestInit) => [string, RequestInit] = (u, i) => [u, i],
) {
  const calls: string[] = [];
  const wrapped: typeof fetch = (input, init) => {
    const [url, next] = rewrite(String(input), init ?? {});
    calls.push(url);
    return fetch(url, next);
  };
  return { calls, fetch: wrapped };
}

/** Reason codes seen surfacing through the client, to check that none was left untested. */
const surfaced = new Set<string>();

/** The error a call failed with, checked for what every problem carries. */
async function failureOf(call: Promise<unknown>): Promise<EdsApiError | undefined> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof EdsApiError, String(error));
    surfaced.add(error.reasonCode);
    assert.ok(error.requestId, 'every problem carries a request id');
    assert.equal(error.problem?.reason_code, error.reasonCode);
    assert.equal(error.problem?.message, error.detail, 'the problem’s message is the error’s detail');
    assert.equal(error.field, error.problem?.field);
    return error;
  }
  return undefined;
}

async function reasonOf(call: Promise<unknown>): Promise<string> {
  const error = await failureOf(call);
  return error ? `${error.status} ${error.reasonCode}` : 'no error';
}

describe('every route', () => {
  it('lists, reads an encounter, both document kinds, a transcript and a working audio link', async () => {
    const eds = client();
    const page = await eds.listEncounters({ limit: 100, sort_order: 'asc' });
    assert.ok(page.items.some((e) => e.encounter_id === world.encounter));
    assert.ok(
      !page.items.some((e) => e.encounter_id === world.demoEncounter),
      'demo encounters are not listed',
    );

    const encounter = await eds.getEncounter(world.encounter);
    assert.equal(encounter.encounter_id, world.encounter);
    assert.deepEqual(
      page.items.find((e) => e.encounter_id === world.encounter),
      encounter,
    );

    const note = await eds.getDocument(world.encounter, world.note);
    assert.equal(note.content?.format, 'markdown');
    const ambient = await eds.getDocument(world.encounter, world.ambient);
    assert.equal(ambient.schema_type, 'ambient_transcript');
    assert.equal('content' in ambient, false);

    const transcript = await eds.getTranscript(world.encounter, world.ambient);
    assert.equal(transcript.document_id, world.ambient);
    assert.ok(transcript.transcript.turns.length > 0);

    const link = await eds.getAudioLink(world.encounter, world.ambient);
    assert.ok(link instanceof AudioLink);
    assert.ok(link.remainingMs > 0);
    const audio = await fetch(link.url);
    assert.equal(audio.status, 200);
    assert.deepEqual(Buffer.from(await audio.arrayBuffer()), AUDIO_BYTES);
  });

  it('an ID with URL-significant characters is a clean 404, not another route', async () => {
    assert.equal(await reasonOf(client().getEncounter('enc_1/documents/x?y=1#z')), '404 encounter_not_found');
  });
});

describe('every reason code surfaces with its status', () => {
  it('401 authentication codes', async () => {
    const f = server.fixtures;
    const revoked = await f.key(world.orgA, { state: 'revoked' });
    const disabled = await f.key(world.orgA, { state: 'disabled' });
    const expired = await f.key(world.orgA, { expiresAt: Date.parse('2020-01-01T00:00:00Z') });
    const keysOff = await f.organization({ apiKeysEnabled: false });
    const keyOff = await f.key(keysOff);
    const noBearer = countingFetch((url, init) => {
      const headers = new Headers(init.headers);
      headers.delete('authorization');
      return [url, { ...init, headers }];
    });
    const cases: [() => Promise<unknown>, string][] = [
      [
        () => client(world.token, { fetch: noBearer.fetch }).getEncounter(world.encounter),
        '401 missing_bearer',
      ],
      [() => client(generateToken('test')).getEncounter(world.encounter), '401 test_prefix_not_allowed'],
      [() => client('eds_live_not-a-real-token').getEncounter(world.encounter), '401 malformed_token'],
      [() => client(generateToken('live')).getEncounter(world.encounter), '401 invalid_key'],
      [() => client(revoked.token).getEncounter(world.encounter), '401 revoked_key'],
      [() => client(disabled.token).getEncounter(world.encounter), '401 disabled_key'],
      [() => client(expired.token).getEncounter(world.encounter), '401 expired_key'],
      [() => client(keyOff.token).listEncounters(), '401 api_keys_disabled'],
    ];
    for (const [call, expected] of cases) assert.equal(await reasonOf(call()), expected);
  });

  it('401 api_keys_disabled for the whole deployment', async () => {
    const off = await startTestServer('sqlite', {
      database: server.database,
      env: { EDS_API_KEYS_ENABLED: 'false' },
    });
    try {
      const eds = new EncounterDataClient({ baseUrl: off.url, apiKey: world.token });
      assert.equal(await reasonOf(eds.listEncounters()), '401 api_keys_disabled');
    } finally {
      await off.close();
    }
  });

  it('403 codes', async () => {
    const f = server.fixtures;
    const userKey = await f.key(world.orgA, { kind: 'user' });
    const noRecordings = await f.key(world.orgA, {
      scopes: ['encounters:read', 'patients:read', 'documents:read'],
    });
    const encountersOnly = await f.organization({ routes: ['encounters'] });
    const encountersOnlyEncounter = await f.encounter(encountersOnly);
    const encountersOnlyKey = await f.key(encountersOnly);
    const notAllowlisted = await f.key(await f.organization({ allowlisted: false }));
    const cases: [() => Promise<unknown>, string][] = [
      [() => client(userKey.token).listEncounters(), '403 org_scope_only_required'],
      [() => client(noRecordings.token).getAudioLink(world.encounter, world.ambient), '403 missing_scope'],
      [
        () => client(encountersOnlyKey.token).getDocument(encountersOnlyEncounter, 'doc_x'),
        '403 route_not_allowed',
      ],
      [() => client(notAllowlisted.token).listEncounters(), '403 organization_not_allowlisted'],
      [() => client().getEncounter(world.encounterB), '403 cross_organization_denied'],
      [() => client().getDocument(world.demoEncounter, world.demoNote), '403 demo_training_denied'],
    ];
    for (const [call, expected] of cases) assert.equal(await reasonOf(call()), expected);
  });

  it('400, 404 and 405 codes', async () => {
    const eds = client();
    const extraKey = countingFetch((url, init) => [
      `${url}${url.includes('?') ? '&' : '?'}patient_id=pat_1`,
      init,
    ]);
    const post = countingFetch((url, init) => [url, { ...init, method: 'POST' }]);
    const cases: [() => Promise<unknown>, string][] = [
      [() => client(world.token, { fetch: extraKey.fetch }).listEncounters(), '400 unsupported_filter'],
      [() => eds.getDocument(world.encounter, world.internal), '400 unsupported_document_type'],
      [() => eds.getTranscript(world.encounter, world.note), '400 unsupported_document_type'],
      [() => eds.getAudioLink(world.encounter, world.bare), '400 audio_not_available_for_document'],
      [() => eds.getEncounter('enc_does_not_exist'), '404 encounter_not_found'],
      [() => eds.getDocument(world.encounter, world.otherNote), '404 document_not_found'],
      [() => eds.getTranscript(world.encounter, world.unfinalized), '404 transcript_not_found'],
      [() => eds.getAudioLink(world.encounter, world.missingAudio), '404 audio_not_found'],
      [
        () => client(world.token, { baseUrl: `${server.url}/nowhere` }).listEncounters(),
        '404 route_not_found',
      ],
      [() => client(world.token, { fetch: post.fetch }).listEncounters(), '405 method_not_allowed'],
    ];
    for (const [call, expected] of cases) assert.equal(await reasonOf(call()), expected);
  });

  it('422 codes of the list route, with the parameter at fault in error.field', async () => {
    const eds = client();
    const cases: [() => Promise<unknown>, string, string | null][] = [
      [() => eds.listEncounters({ limit: 0 }), '422 invalid_limit', 'limit'],
      [() => eds.listEncounters({ limit: 101 }), '422 invalid_limit', 'limit'],
      [() => eds.listEncounters({ offset: 10_001 }), '422 invalid_offset', 'offset'],
      [() => eds.listEncounters({ sort_order: 'newest' as 'asc' }), '422 invalid_sort', 'sort_order'],
      [() => eds.listEncounters({ start_at: '2026-05-01' }), '422 invalid_query', 'start_at'],
      [
        () => eds.listEncounters({ start_at: new Date('2026-05-02'), end_at: new Date('2026-05-01') }),
        '422 invalid_query',
        null,
      ],
    ];
    for (const [call, expected, field] of cases) {
      const error = await failureOf(call());
      assert.equal(`${error?.status} ${error?.reasonCode}`, expected);
      assert.equal(error?.field, field, expected);
    }
  });
});

describe('retries against the real server', () => {
  it('503 digest_key_unavailable is retried, then surfaces as retryable', async () => {
    const broken = await startTestServer('sqlite', {
      database: server.database,
      services: {
        digestKey: {
          current() {
            throw new Error('key service down');
          },
        },
      },
    });
    try {
      const counted = countingFetch();
      const eds = new EncounterDataClient({
        baseUrl: broken.url,
        apiKey: world.token,
        retries: 2,
        retryBaseDelayMs: 1,
        fetch: counted.fetch,
      });
      const error = await eds.listEncounters().catch((e: unknown) => e);
      assert.ok(error instanceof EdsApiError);
      surfaced.add(error.reasonCode);
      assert.equal(error.reasonCode, 'digest_key_unavailable');
      assert.equal(error.retryable, true);
      assert.equal(counted.calls.length, 3);
    } finally {
      await broken.close();
    }
  });

  it('503 audit_unavailable (the audit store refusing records) is retried, then surfaces as retryable', async () => {
    const sqlite = server.services.store.sqlite!;
    sqlite.exec('ALTER TABLE audit_log RENAME TO audit_log_away');
    try {
      const counted = countingFetch();
      const eds = client(world.token, { retries: 2, fetch: counted.fetch });
      const error = await eds.getEncounter(world.encounter).catch((e: unknown) => e);
      assert.ok(error instanceof EdsApiError);
      surfaced.add(error.reasonCode);
      assert.equal(error.reasonCode, 'audit_unavailable');
      assert.equal(error.retryable, true);
      assert.equal(counted.calls.length, 3);
    } finally {
      sqlite.exec('ALTER TABLE audit_log_away RENAME TO audit_log');
    }
    assert.equal((await client().getEncounter(world.encounter)).encounter_id, world.encounter);
  });

  it('503 service_unavailable (the store failing after the key was verified) is retried, then surfaces as retryable', async () => {
    const sqlite = server.services.store.sqlite!;
    sqlite.exec('ALTER TABLE encounter_reads RENAME TO encounter_reads_away');
    try {
      const counted = countingFetch();
      const eds = client(world.token, { retries: 2, fetch: counted.fetch });
      const error = await failureOf(eds.getEncounter(world.encounter));
      assert.equal(error?.reasonCode, 'service_unavailable');
      assert.equal(error?.retryable, true);
      assert.equal(error?.retryAfterMs, 1000);
      assert.equal(error?.field, null);
      assert.equal(counted.calls.length, 3);
    } finally {
      sqlite.exec('ALTER TABLE encounter_reads_away RENAME TO encounter_reads');
    }
    assert.equal((await client().getEncounter(world.encounter)).encounter_id, world.encounter);
  });

  it('503 audio_storage_unavailable is retried; 4xx from the same server is not', async () => {
    const media = server.services.media;
    const down = await startTestServer('sqlite', {
      database: server.database,
      services: {
        media: {
          driver: media.driver,
          put: media.put.bind(media),
          createLink: media.createLink.bind(media),
          exists: async () => {
            throw new StorageUnavailableError('storage down');
          },
        },
      },
    });
    try {
      const counted = countingFetch();
      const eds = new EncounterDataClient({
        baseUrl: down.url,
        apiKey: world.token,
        retryBaseDelayMs: 1,
        fetch: counted.fetch,
      });
      assert.equal(
        await reasonOf(eds.getAudioLink(world.encounter, world.ambient)),
        '503 audio_storage_unavailable',
      );
      assert.equal(counted.calls.length, 3);
      counted.calls.length = 0;
      assert.equal(await reasonOf(eds.getEncounter('enc_missing')), '404 encounter_not_found');
      assert.equal(counted.calls.length, 1);
    } finally {
      await down.close();
    }
  });
});

describe('walking many pages', () => {
  let token: string;
  const ids: { id: string; at: number }[] = [];
  const T0 = Date.parse('2026-02-01T00:00:00.000Z');

  before(async () => {
    const org = await server.fixtures.organization();
    const patient = await server.fixtures.patient(org);
    // 10,180 encounters; every 50 consecutive ones share a created_at (ties at every page cut).
    const rows = Array.from({ length: 10_180 }, (_, i) => {
      const at = T0 + Math.floor(i / 50) * 60_000;
      const id = `enc_walk_${String((i * 7_919) % 10_180).padStart(5, '0')}`;
      ids.push({ id, at });
      return {
        id,
        organization_id: org,
        patient_id: patient,
        encounter_type: 'ambient',
        status: 'completed',
        date_of_service: at,
        created_at: at,
        updated_at: at,
        demo_training: 0 as const,
      };
    });
    await server.services.store.db.transaction().execute(async (tx) => {
      await upsertEncounters(tx, rows);
      // The API answers from the read model, which every writer of clinical data keeps.
      await applyReadModelChanges(tx, { encounters: rows.map((r) => r.id) });
    });
    token = (await server.fixtures.key(org)).token;
  });

  const expected = (asc: boolean, from = -Infinity, to = Infinity) =>
    ids
      .filter((r) => r.at >= from && r.at < to)
      .sort((a, b) => (a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) * (asc ? 1 : -1))
      .map((r) => r.id);

  it('a window across many small pages, in order', async () => {
    const from = T0 + 10 * 60_000;
    const to = T0 + 40 * 60_000;
    const seen: string[] = [];
    for await (const e of client(token).iterateEncounters({
      sort_order: 'asc',
      start_at: new Date(from),
      end_at: new Date(to),
      limit: 37,
    })) {
      seen.push(e.encounter_id);
    }
    assert.equal(seen.length, 1_500);
    assert.deepEqual(seen, expected(true, from, to));
  });

  for (const order of ['asc', 'desc'] as const) {
    it(`everything past the 10,000 offset cap (${order}), each encounter once and in order`, async () => {
      const seen: string[] = [];
      for await (const e of client(token).iterateEncounters({ sort_order: order })) seen.push(e.encounter_id);
      assert.equal(new Set(seen).size, seen.length);
      assert.deepEqual(seen, expected(order === 'asc'));
    });
  }
});

describe('rate limits, against a server with small buckets', () => {
  // The server's clock is the test's: a bucket refills only when the test moves it.
  let now = Date.parse('2026-06-01T12:00:00Z');
  let limited: TestServer;
  let token: string;
  before(async () => {
    limited = await startTestServer('sqlite', {
      env: { EDS_RATE_LIMIT_PER_KEY: '1', EDS_RATE_LIMIT_BURST: '2' },
      clock: () => now,
    });
    const org = await limited.fixtures.organization();
    await limited.fixtures.encounter(org);
    ({ token } = await limited.fixtures.key(org));
  });
  after(() => limited.close());

  /** A fetch that moves the server's clock by the Retry-After of every 429 it sees. */
  const refillingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (response.status === 429) now += Number(response.headers.get('retry-after')) * 1000;
    return response;
  };

  it('exposes the last seen limits from the RateLimit fields', async () => {
    const eds = new EncounterDataClient({ baseUrl: limited.url, apiKey: token, retries: 0 });
    const beforeAnyAnswer = eds.rateLimit;
    assert.equal(beforeAnyAnswer, undefined);
    await eds.listEncounters();
    assert.deepEqual(
      { ...eds.rateLimit, observedAt: undefined },
      { policy: 'key', quota: 2, windowSeconds: 2, remaining: 1, resetSeconds: 1, observedAt: undefined },
    );
    await eds.listEncounters();
    assert.equal(eds.rateLimit?.remaining, 0);
  });

  it('a 429 beyond the retry budget surfaces as rate_limited with retryAfterMs, and the limits seen', async () => {
    const eds = new EncounterDataClient({ baseUrl: limited.url, apiKey: token, retries: 0 });
    const error = await reasonOf(eds.listEncounters());
    assert.equal(error, '429 rate_limited');
    assert.equal(eds.rateLimit?.remaining, 0);
  });

  it('waits for Retry-After on 429 and retries within its budget', async () => {
    const calls: number[] = [];
    const eds = new EncounterDataClient({
      baseUrl: limited.url,
      apiKey: token,
      retries: 2,
      fetch: async (input, init) => {
        const response = await refillingFetch(input, init);
        calls.push(response.status);
        return response;
      },
    });
    const page = await eds.listEncounters();
    assert.equal(page.items.length, 1);
    assert.deepEqual(calls, [429, 200]);
  });
});

describe('conditional requests against the real server', () => {
  it('each of routes 1-4 answers "not modified" for its own current ETag, and the body for a stale one', async () => {
    const eds = client();
    const calls = [
      (etag: string | undefined) => eds.listEncountersIfChanged({ limit: 5, sort_order: 'asc' }, etag),
      (etag: string | undefined) => eds.getEncounterIfChanged(world.encounter, etag),
      (etag: string | undefined) => eds.getDocumentIfChanged(world.encounter, world.note, etag),
      (etag: string | undefined) => eds.getTranscriptIfChanged(world.encounter, world.ambient, etag),
    ];
    const tags = new Set<string>();
    for (const call of calls) {
      const first = await call(undefined);
      assert.equal(first.notModified, false);
      assert.match(first.etag ?? '', /^"[^"]+"$/, 'a strong ETag');
      tags.add(first.etag as string);
      const again = await call(first.etag);
      assert.equal(again.notModified, true);
      assert.equal(again.etag, first.etag);
      const stale = await call('"not-the-current-tag"');
      assert.equal(stale.notModified, false);
      if (!stale.notModified && !first.notModified) assert.deepEqual(stale.body, first.body);
    }
    assert.equal(tags.size, calls.length, 'different bodies carry different tags');
  });
});

/** Codes only the media host answers: met when fetching an `audio_url`, never by the client. */
const MEDIA_HOST_ONLY = ['link_invalid', 'link_expired', 'range_not_satisfiable'];

describe('coverage', () => {
  it('every reason code of the API surfaced through the client above', () => {
    assert.deepEqual(
      REASON_CODES.filter((code) => !surfaced.has(code) && !MEDIA_HOST_ONLY.includes(code)),
      [],
    );
  });
});
