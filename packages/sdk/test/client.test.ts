/**
 * The client against a real node:http server on loopback that the test scripts: routes and
 * encoding, error translation, the retry policy (503, 429 and network failures), timeouts,
 * conditional requests (If-None-Match → "not modified"),
 * and that the API key never shows up in anything a caller could log.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { inspect } from 'node:util';
import {
  AudioLink,
  AudioLinkExpiredError,
  EdsApiError,
  EdsNetworkError,
  EncounterDataClient,
  type EncounterDataClientOptions,
} from '../src/index.js';
import { closedPort, json, type Loopback, problem, startLoopback } from './support/loopback.js';

const API_KEY = 'eds_live_SECRETsecretSECRETsecret0123456789ab';

const ENCOUNTER = {
  encounter_id: 'enc_1',
  organization_id: 'org_1',
  encounter_type: 'ambient',
  status: 'completed',
  created_at: '2026-05-01T15:00:00.000Z',
  updated_at: '2026-05-01T15:05:00.000Z',
  date_of_service: '2026-05-01T14:00:00.000Z',
  patient: { patient_id: 'pat_1', first_name: 'Ana', last_name: 'Silva', date_of_birth: '1980-02-29' },
  documents: [],
};

const servers: Loopback[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function serve(handler: Parameters<typeof startLoopback>[0]) {
  const server = await startLoopback(handler);
  servers.push(server);
  return server;
}

function client(baseUrl: string, options: Partial<EncounterDataClientOptions> = {}) {
  return new EncounterDataClient({
    baseUrl,
    apiKey: API_KEY,
    retryBaseDelayMs: 5,
    retryMaxDelayMs: 2_000,
    ...options,
  });
}

async function caught(promise: Promise<unknown>): Promise<EdsApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof EdsApiError, `expected EdsApiError, got ${error}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

function assertNoKey(...things: unknown[]) {
  for (const thing of things) {
    const texts = [
      String(thing),
      inspect(thing, { depth: 10, showHidden: true }),
      JSON.stringify(thing) ?? '',
    ];
    if (thing instanceof Error) texts.push(thing.message, thing.stack ?? '');
    for (const text of texts) assert.ok(!text.includes(API_KEY), `API key leaked in: ${text.slice(0, 200)}`);
    for (const text of texts) assert.ok(!text.includes('SECRETsecret'), 'part of the API key leaked');
  }
}

describe('routes', () => {
  it('sends the bearer key and unwraps each route body', async () => {
    const server = await serve((req, res) => {
      const path = req.url ?? '';
      if (path.startsWith('/external/v1/encounters?'))
        return json(res, 200, { items: [ENCOUNTER], limit: 2, offset: 0, total: 1 });
      if (path.endsWith('/transcript'))
        return json(res, 200, {
          encounter_id: 'enc_1',
          document_id: 'doc_1',
          transcript: { provider: 'x', audio_duration_seconds: 1, turns: [] },
        });
      if (path.endsWith('/audio'))
        return json(res, 200, {
          audio_url: 'http://media.invalid/a?sig=abc',
          expires_at: '2999-01-01T00:00:00.000Z',
        });
      if (path.includes('/documents/'))
        return json(res, 200, { document: { document_id: 'doc_1', encounter_id: 'enc_1' } });
      return json(res, 200, { encounter: ENCOUNTER });
    });
    const eds = client(`${server.url}/`);
    const page = await eds.listEncounters({
      limit: 2,
      offset: 0,
      sort_order: 'asc',
      start_at: new Date('2026-05-01T00:00:00Z'),
      end_at: '2026-05-02T00:00:00+02:00',
    });
    assert.equal(page.total, 1);
    assert.equal((await eds.getEncounter('enc_1')).encounter_id, 'enc_1');
    assert.equal((await eds.getDocument('enc_1', 'doc_1')).document_id, 'doc_1');
    assert.equal((await eds.getTranscript('enc_1', 'doc_1')).transcript.provider, 'x');
    assert.ok((await eds.getAudioLink('enc_1', 'doc_1')) instanceof AudioLink);

    assert.deepEqual(
      server.requests.map((r) => r.url),
      [
        '/external/v1/encounters?limit=2&offset=0&sort_order=asc&start_at=2026-05-01T00%3A00%3A00.000Z&end_at=2026-05-02T00%3A00%3A00%2B02%3A00',
        '/external/v1/encounters/enc_1',
        '/external/v1/encounters/enc_1/documents/doc_1',
        '/external/v1/encounters/enc_1/documents/doc_1/transcript',
        '/external/v1/encounters/enc_1/documents/doc_1/audio',
      ],
    );
    for (const r of server.requests) {
      assert.equal(r.method, 'GET');
      assert.equal(r.headers.authorization, `Bearer ${API_KEY}`);
    }
  });

  it('sends no query at all when no list parameter is given', async () => {
    const server = await serve((_req, res) => json(res, 200, { items: [], limit: 50, offset: 0, total: 0 }));
    await client(server.url).listEncounters();
    assert.equal(server.requests[0]?.url, '/external/v1/encounters');
  });

  it('percent-encodes path IDs so they cannot change the route', async () => {
    const server = await serve((_req, res) => json(res, 200, { document: {} }));
    await client(server.url).getDocument('a/b?c#d e%', 'ü/..');
    assert.equal(
      server.requests[0]?.url,
      '/external/v1/encounters/a%2Fb%3Fc%23d%20e%25/documents/%C3%BC%2F..',
    );
  });

  it('refuses IDs a URL path cannot carry, without sending anything', async () => {
    const server = await serve((_req, res) => json(res, 200, {}));
    const eds = client(server.url);
    for (const id of ['', '.', '..']) {
      await assert.rejects(eds.getEncounter(id), TypeError);
      await assert.rejects(eds.getAudioLink('enc_1', id), TypeError);
    }
    assert.equal(server.requests.length, 0);
  });

  it('keeps a base URL path prefix', async () => {
    const server = await serve((_req, res) => json(res, 200, { encounter: ENCOUNTER }));
    await client(`${server.url}/eds/`).getEncounter('enc_1');
    assert.equal(server.requests[0]?.url, '/eds/external/v1/encounters/enc_1');
  });
});

describe('errors', () => {
  const cases: [number, string][] = [
    [400, 'unsupported_filter'],
    [401, 'revoked_key'],
    [403, 'missing_scope'],
    [404, 'encounter_not_found'],
    [405, 'method_not_allowed'],
    [422, 'invalid_limit'],
  ];
  for (const [status, code] of cases) {
    it(`${status} ${code} surfaces with its reason code and request id, not retried`, async () => {
      const server = await serve((_req, res) => problem(res, status, code));
      const error = await caught(client(server.url).getEncounter('enc_1'));
      assert.equal(error.status, status);
      assert.equal(error.reasonCode, code);
      assert.equal(error.requestId, `req_${code}`);
      assert.equal(error.retryable, false);
      assert.equal(error.detail, `Failure ${code}.`);
      assert.equal(error.attempts, 1);
      assert.ok(error.is(code as never));
      assert.ok(error.message.includes(code));
      assert.equal(server.requests.length, 1);
    });
  }

  it('an unknown reason code or a non-problem body is unexpected_response, body kept out of the message', async () => {
    const server = await serve((_req, res, i) => {
      if (i === 0) return problem(res, 418, 'brand_new_code');
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    });
    const eds = client(server.url);
    const unknown = await caught(eds.getEncounter('enc_1'));
    assert.equal(unknown.reasonCode, 'unexpected_response');
    assert.equal(unknown.problem?.reason_code, 'brand_new_code');
    const html = await caught(eds.getEncounter('enc_1'));
    assert.equal(html.reasonCode, 'unexpected_response');
    assert.equal(html.status, 502);
    assert.equal(html.retryable, false);
    assert.ok(!html.message.includes('<html>'));
    assert.equal(server.requests.length, 2);
  });

  it('does not follow redirects (the key must not travel elsewhere)', async () => {
    const elsewhere = await serve((_req, res) => json(res, 200, { encounter: ENCOUNTER }));
    const server = await serve((_req, res) => {
      res.writeHead(302, { location: `${elsewhere.url}/external/v1/encounters/enc_1` });
      res.end();
    });
    const error = await caught(client(server.url).getEncounter('enc_1'));
    assert.equal(error.status, 302);
    assert.equal(error.reasonCode, 'unexpected_response');
    assert.equal(elsewhere.requests.length, 0);
  });
});

describe('retries', () => {
  it('retries a 503 and returns the later success', async () => {
    const server = await serve((_req, res, i) =>
      i === 0 ? problem(res, 503, 'digest_key_unavailable') : json(res, 200, { encounter: ENCOUNTER }),
    );
    const encounter = await client(server.url).getEncounter('enc_1');
    assert.equal(encounter.encounter_id, 'enc_1');
    assert.equal(server.requests.length, 2);
  });

  it('gives up after `retries` retries of 503, with a retryable error', async () => {
    const server = await serve((_req, res) => problem(res, 503, 'audio_storage_unavailable'));
    const error = await caught(client(server.url, { retries: 2 }).getAudioLink('enc_1', 'doc_1'));
    assert.equal(error.reasonCode, 'audio_storage_unavailable');
    assert.equal(error.retryable, true);
    assert.equal(error.attempts, 3);
    assert.equal(server.requests.length, 3);
  });

  it('retries: 0 sends once', async () => {
    const server = await serve((_req, res) => problem(res, 503, 'digest_key_unavailable'));
    await caught(client(server.url, { retries: 0 }).getEncounter('enc_1'));
    assert.equal(server.requests.length, 1);
  });

  for (const [status, code] of [
    [500, 'unexpected'],
    [502, 'unexpected'],
    [400, 'unsupported_filter'],
    [401, 'invalid_key'],
    [404, 'document_not_found'],
  ] as const) {
    it(`does not retry ${status}`, async () => {
      const server = await serve((_req, res) => problem(res, status, code));
      const error = await caught(client(server.url, { retries: 3 }).getDocument('enc_1', 'doc_1'));
      assert.equal(error.status, status);
      assert.equal(error.retryable, false);
      assert.equal(server.requests.length, 1);
    });
  }

  it('waits at least the Retry-After the service asks for', async () => {
    const server = await serve((_req, res, i) =>
      i === 0
        ? problem(res, 503, 'digest_key_unavailable', { 'retry-after': '1' })
        : json(res, 200, { encounter: ENCOUNTER }),
    );
    const started = Date.now();
    await client(server.url).getEncounter('enc_1');
    assert.ok(Date.now() - started >= 950, `retried after ${Date.now() - started} ms`);
    assert.equal(server.requests.length, 2);
  });

  it('hands a 429 whose Retry-After is longer than retryMaxDelayMs to the caller, retryable', async () => {
    const server = await serve((_req, res) => problem(res, 429, 'rate_limited', { 'retry-after': '60' }));
    const error = await caught(client(server.url).getEncounter('enc_1'));
    assert.equal(error.reasonCode, 'rate_limited');
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfterMs, 60_000);
    assert.equal(server.requests.length, 1);
  });

  it('hands a Retry-After longer than retryMaxDelayMs to the caller instead of retrying early', async () => {
    const server = await serve((_req, res) =>
      problem(res, 503, 'digest_key_unavailable', { 'retry-after': '120' }),
    );
    const error = await caught(client(server.url).getEncounter('enc_1'));
    assert.equal(error.retryAfterMs, 120_000);
    assert.equal(server.requests.length, 1);
  });

  it('sends If-None-Match and returns "not modified" on 304, else the body and its ETag', async () => {
    const etag = '"v1-enc_1"';
    const server = await serve((req, res) => {
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag, 'cache-control': 'no-store' });
        res.end();
      } else {
        json(res, 200, { encounter: ENCOUNTER }, { etag });
      }
    });
    const eds = client(server.url);
    const first = await eds.getEncounterIfChanged('enc_1', undefined);
    assert.equal(first.notModified, false);
    assert.equal(first.etag, etag);
    assert.deepEqual(first.notModified ? undefined : first.body, ENCOUNTER);
    assert.equal(server.requests[0]!.headers['if-none-match'], undefined);

    const again = await eds.getEncounterIfChanged('enc_1', etag);
    assert.deepEqual(again, { notModified: true, etag });
    assert.equal(server.requests[1]!.headers['if-none-match'], etag);

    const changed = await eds.getEncounterIfChanged('enc_1', '"v0-enc_1"');
    assert.equal(changed.notModified, false);
  });

  it('sends If-None-Match on the list, document and transcript routes too', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(304, { etag: '"same"' });
      res.end();
    });
    const eds = client(server.url);
    assert.equal((await eds.listEncountersIfChanged({ limit: 5 }, '"same"')).notModified, true);
    assert.equal((await eds.getDocumentIfChanged('enc_1', 'doc_1', '"same"')).notModified, true);
    assert.equal((await eds.getTranscriptIfChanged('enc_1', 'doc_1', '"same"')).notModified, true);
    assert.deepEqual(
      server.requests.map((r) => [r.url, r.headers['if-none-match']]),
      [
        ['/external/v1/encounters?limit=5', '"same"'],
        ['/external/v1/encounters/enc_1/documents/doc_1', '"same"'],
        ['/external/v1/encounters/enc_1/documents/doc_1/transcript', '"same"'],
      ],
    );
  });

  it('retries a refused connection, then fails with EdsNetworkError network_error', async () => {
    const error = await caught(client(await closedPort(), { retries: 2 }).getEncounter('enc_1'));
    assert.ok(error instanceof EdsNetworkError);
    assert.equal(error.status, 0);
    assert.equal(error.reasonCode, 'network_error');
    assert.equal(error.retryable, true);
    assert.equal(error.attempts, 3);
    assert.match(error.message, /ECONNREFUSED/);
    assertNoKey(error);
  });

  it('times out a server that never answers, retrying, then fails with timeout', async () => {
    const server = await serve(() => {
      // Never answer.
    });
    const started = Date.now();
    const error = await caught(client(server.url, { timeoutMs: 150, retries: 1 }).getEncounter('enc_1'));
    assert.ok(error instanceof EdsNetworkError);
    assert.equal(error.reasonCode, 'timeout');
    assert.equal(server.requests.length, 2);
    assert.ok(Date.now() - started >= 300);
  });

  it('times out a body that stalls after the headers', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"encounter":');
    });
    const error = await caught(client(server.url, { timeoutMs: 150, retries: 0 }).getEncounter('enc_1'));
    assert.equal(error.reasonCode, 'timeout');
  });

  it("stops at once when the caller's signal aborts, rethrowing its reason", async () => {
    const controller = new AbortController();
    // Abort once the request is in flight; the server never answers.
    const server = await serve(() => controller.abort(new Error('caller gave up')));
    await assert.rejects(
      client(server.url, { retries: 5 }).getEncounter('enc_1', { signal: controller.signal }),
      /caller gave up/,
    );
    assert.equal(server.requests.length, 1);
  });
});

describe('the API key stays secret', () => {
  it('is absent from the client when printed, inspected or serialized', () => {
    const eds = client('http://127.0.0.1:9');
    assertNoKey(eds);
    assert.match(inspect(eds), /EncounterDataClient/);
  });

  it('is absent from API errors and network errors, even when the server echoes nothing', async () => {
    const server = await serve((_req, res) => problem(res, 401, 'invalid_key'));
    assertNoKey(await caught(client(server.url).getEncounter('enc_1')));
    assertNoKey(await caught(client(await closedPort(), { retries: 0 }).getEncounter('enc_1')));
  });

  it('rejects a missing key and a base URL carrying credentials', () => {
    assert.throws(() => new EncounterDataClient({ baseUrl: 'http://127.0.0.1', apiKey: '' }), TypeError);
    assert.throws(
      () => new EncounterDataClient({ baseUrl: 'http://u:p@127.0.0.1', apiKey: API_KEY }),
      TypeError,
    );
  });
});

describe('audio links', () => {
  const URL_WITH_SIGNATURE = 'http://media.invalid/audio/rec.wav?expires=1&signature=deadbeef';

  it('gives the URL before expiry but never prints or serializes it', async () => {
    const server = await serve((_req, res) =>
      json(res, 200, {
        audio_url: URL_WITH_SIGNATURE,
        expires_at: new Date(Date.now() + 60_000).toISOString(),
      }),
    );
    const link = await client(server.url).getAudioLink('enc_1', 'doc_1');
    assert.equal(link.url, URL_WITH_SIGNATURE);
    assert.equal(link.expired, false);
    assert.ok(link.remainingMs > 0 && link.remainingMs <= 60_000);
    for (const text of [
      String(link),
      `${link}`,
      inspect(link),
      inspect({ nested: [link] }, { depth: 5 }),
      JSON.stringify({ link }),
    ]) {
      assert.ok(!text.includes('deadbeef') && !text.includes('media.invalid'), text);
    }
    assert.match(JSON.stringify(link), /expires_at/);
  });

  it('refuses the URL at and after expires_at with a clear error', () => {
    let now = Date.parse('2026-05-01T15:00:00.000Z');
    const link = new AudioLink(
      { audio_url: URL_WITH_SIGNATURE, expires_at: '2026-05-01T15:05:00.000Z' },
      () => now,
    );
    assert.equal(link.url, URL_WITH_SIGNATURE);
    now = Date.parse('2026-05-01T15:05:00.000Z');
    assert.throws(
      () => link.url,
      (error: unknown) =>
        error instanceof AudioLinkExpiredError &&
        error.message.includes('2026-05-01T15:05:00.000Z') &&
        !error.message.includes('deadbeef'),
    );
    assert.equal(link.expired, true);
    assert.equal(link.remainingMs, 0);
  });

  it('an already expired link from the server throws on use', async () => {
    const server = await serve((_req, res) =>
      json(res, 200, { audio_url: URL_WITH_SIGNATURE, expires_at: '2020-01-01T00:00:00.000Z' }),
    );
    const link = await client(server.url).getAudioLink('enc_1', 'doc_1');
    assert.throws(() => link.url, AudioLinkExpiredError);
  });
});
