/**
 * The embedded media host end to end: recordings written through the local driver into a real
 * folder, links issued by the driver, fetched over loopback with a real HTTP client.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { REASONS, type ReasonCode } from '../../src/contract/reasons.js';
import { signMediaLink } from '../../src/media/linkSigner.js';
import { type MediaHost, startMediaHost } from '../../src/media/mediaHost.js';
import type { MediaLink } from '../../src/media/storage.js';
import { createMediaDeployment, MEDIA_SECRET, type MediaDeployment, rawRequest } from './support.js';

const RECORDING = randomBytes(300_000); // several stream chunks
const OTHER = randomBytes(1000);
const KEY = 'recordings/doc_a/visit.wav';
const OTHER_KEY = 'recordings/doc_b/visit.wav';

/** Replaces one character of `text` at `index` with a different one of the same kind. */
function changeOne(text: string, index: number): string {
  const c = text[index]!;
  const replacement = /\d/.test(c) ? String((Number(c) + 1) % 10) : c === 'a' ? 'b' : 'a';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  reason_code: string;
  request_id: string;
  message: string;
  field: string | null;
}

/** Every code the host answered with in this file, to check none is the API's alone. */
const answered = new Set<string>();

/** The API's problem body, from the same renderer: the code's status, title and type. */
function expectProblem(response: Response, body: ProblemBody, status: number, reasonCode: ReasonCode): void {
  answered.add(body.reason_code);
  assert.equal(response.status, status);
  assert.equal(REASONS[reasonCode].status, status, 'the reason table gives this status');
  assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.deepEqual(body, {
    type: `/docs/problems#${reasonCode}`,
    title: REASONS[reasonCode].title,
    status,
    detail: body.detail,
    reason_code: reasonCode,
    request_id: response.headers.get('x-request-id'),
    message: body.detail,
    field: null,
  });
  assert.equal(response.headers.get('cache-control'), 'private, no-store');
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
}

async function fetchProblem(url: string, init?: RequestInit): Promise<[Response, ProblemBody]> {
  const response = await fetch(url, init);
  return [response, (await response.json()) as ProblemBody];
}

describe('media host', () => {
  let deployment: MediaDeployment;
  let host: MediaHost;
  const issued: MediaLink[] = [];
  const link = async (key = KEY, contentType = 'audio/wav', ttl = 300) => {
    const created = await deployment.services.media.createLink(key, contentType, ttl);
    issued.push(created);
    return created;
  };

  before(async () => {
    deployment = createMediaDeployment();
    await deployment.services.media.put(KEY, Readable.from([RECORDING]), 'audio/wav');
    await deployment.services.media.put(OTHER_KEY, Readable.from([OTHER]), 'audio/wav');
    host = await startMediaHost(deployment.services);
  });

  after(async () => {
    await host.close();
    await deployment.close();
  });

  it('listens on a real port and issues links that point at it', async () => {
    assert.match(host.url, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    const { url } = await link();
    assert.ok(url.startsWith(`${host.url}/media/${KEY}?`), 'link points at the listening host');
  });

  it('serves the exact bytes of a link fetched in time, with the recorded content type', async () => {
    const { url } = await link();
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), RECORDING);
    assert.equal(response.headers.get('content-type'), 'audio/wav');
    assert.equal(response.headers.get('content-length'), String(RECORDING.length));
    assert.equal(response.headers.get('accept-ranges'), 'bytes');
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  });

  it('never serves a recording as a page: a non-audio content type becomes opaque bytes', async () => {
    const response = await fetch((await link(KEY, 'text/html')).url);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/octet-stream');
    await response.arrayBuffer();
  });

  describe('Range', () => {
    const range = async (header: string, extra: Record<string, string> = {}) => {
      const response = await fetch((await link()).url, { headers: { range: header, ...extra } });
      return { response, body: Buffer.from(await response.arrayBuffer()) };
    };
    const size = RECORDING.length;

    it('first bytes: 206 with Content-Range and exactly those bytes', async () => {
      const { response, body } = await range('bytes=0-99');
      assert.equal(response.status, 206);
      assert.equal(response.headers.get('content-range'), `bytes 0-99/${size}`);
      assert.equal(response.headers.get('content-length'), '100');
      assert.equal(response.headers.get('content-type'), 'audio/wav');
      assert.deepEqual(body, RECORDING.subarray(0, 100));
    });

    it('suffix bytes=-100: the last 100 bytes', async () => {
      const { response, body } = await range('bytes=-100');
      assert.equal(response.status, 206);
      assert.equal(response.headers.get('content-range'), `bytes ${size - 100}-${size - 1}/${size}`);
      assert.deepEqual(body, RECORDING.subarray(size - 100));
    });

    it('open-ended bytes=N-: from N to the end', async () => {
      const { response, body } = await range('bytes=123456-');
      assert.equal(response.status, 206);
      assert.equal(response.headers.get('content-range'), `bytes 123456-${size - 1}/${size}`);
      assert.deepEqual(body, RECORDING.subarray(123456));
    });

    it('a range running past the end is cut at the end', async () => {
      const { response, body } = await range(`bytes=${size - 10}-${size + 5000}`);
      assert.equal(response.status, 206);
      assert.equal(response.headers.get('content-range'), `bytes ${size - 10}-${size - 1}/${size}`);
      assert.deepEqual(body, RECORDING.subarray(size - 10));
    });

    it('unsatisfiable: 416 range_not_satisfiable with Content-Range bytes */size', async () => {
      for (const header of [`bytes=${size}-`, `bytes=${size + 1}-${size + 9}`, 'bytes=-0']) {
        const response = await fetch((await link()).url, { headers: { range: header } });
        const body = (await response.json()) as ProblemBody;
        expectProblem(response, body, 416, 'range_not_satisfiable');
        assert.equal(response.headers.get('content-range'), `bytes */${size}`, header);
      }
    });

    it('several ranges or a malformed one: the whole recording (200), as RFC 9110 allows', async () => {
      for (const header of ['bytes=0-9,20-29', 'bytes=9-0', 'items=0-9']) {
        const { response, body } = await range(header);
        assert.equal(response.status, 200, header);
        assert.deepEqual(body, RECORDING, header);
      }
    });

    it('If-Range naming another version of the object: the whole recording', async () => {
      const { response, body } = await range('bytes=0-9', { 'if-range': '"not-this-version"' });
      assert.equal(response.status, 200);
      assert.deepEqual(body, RECORDING);
      const first = await fetch((await link()).url, { method: 'HEAD' });
      const etag = first.headers.get('etag')!;
      const same = await range('bytes=0-9', { 'if-range': etag });
      assert.equal(same.response.status, 206);
      assert.deepEqual(same.body, RECORDING.subarray(0, 10));
    });
  });

  it('HEAD: the headers of GET and no body, for a whole object and a range', async () => {
    const { url } = await link();
    const whole = await rawRequest(host.url, url.slice(host.url.length), 'HEAD');
    assert.equal(whole.status, 200);
    assert.equal(whole.headers['content-length'], String(RECORDING.length));
    assert.equal(whole.headers['content-type'], 'audio/wav');
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assert.equal(whole.body.length, 0);
    const partial = await fetch(url, { method: 'HEAD', headers: { range: 'bytes=0-9' } });
    assert.equal(partial.status, 206);
    assert.equal(partial.headers.get('content-length'), '10');
  });

  it('other methods: 405 method_not_allowed with Allow: GET, HEAD', async () => {
    const { url } = await link();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const [response, body] = await fetchProblem(url, { method });
      expectProblem(response, body, 405, 'method_not_allowed');
      assert.equal(response.headers.get('allow'), 'GET, HEAD', method);
    }
  });

  it('a path outside /media/: 404 route_not_found', async () => {
    const [response, body] = await fetchProblem(`${host.url}/`);
    expectProblem(response, body, 404, 'route_not_found');
  });

  describe('refused links (403 link_invalid, 410 link_expired)', () => {
    it('expired: 410 link_expired at exactly expiresAt, served one millisecond before', async () => {
      const created = await link();
      try {
        deployment.now.ms = created.expiresAt - 1;
        const inTime = await fetch(created.url);
        assert.equal(inTime.status, 200);
        await inTime.arrayBuffer();
        deployment.now.ms = created.expiresAt;
        const [response, body] = await fetchProblem(created.url);
        expectProblem(response, body, 410, 'link_expired');
      } finally {
        deployment.now.ms = undefined;
      }
    });

    it('one character changed in the signature, the expiry, the type or the path: 403 link_invalid', async () => {
      const { url } = await link();
      const parsed = new URL(url);
      const sig = parsed.searchParams.get('sig')!;
      const expires = parsed.searchParams.get('expires')!;
      const tampered = [
        url.replace(`sig=${sig}`, `sig=${changeOne(sig, 10)}`),
        url.replace(`sig=${sig}`, `sig=${changeOne(sig, sig.length - 1)}`),
        // A later expiry: the kind of change someone would try.
        url.replace(`expires=${expires}`, `expires=${changeOne(expires, expires.length - 4)}`),
        url.replace('type=audio%2Fwav', 'type=audio%2Fwab'),
        url.replace('/visit.wav?', '/visit.wab?'),
        url.replace('/doc_a/', '/doc_b/'), // same signature, another existing object
      ];
      for (const candidate of tampered) {
        assert.notEqual(candidate, url);
        const [response, body] = await fetchProblem(candidate);
        expectProblem(response, body, 403, 'link_invalid');
        assert.equal(body.detail.includes(sig), false);
      }
    });

    it("a link for another object does not open this one (the other's link still works)", async () => {
      const other = await link(OTHER_KEY);
      const mine = new URL((await link()).url);
      const swapped = new URL(other.url);
      swapped.pathname = mine.pathname;
      const [response, body] = await fetchProblem(swapped.toString());
      expectProblem(response, body, 403, 'link_invalid');
      const own = await fetch(other.url);
      assert.deepEqual(Buffer.from(await own.arrayBuffer()), OTHER);
    });

    it('missing, repeated or malformed link parameters', async () => {
      const { url } = await link();
      const bare = url.slice(0, url.indexOf('?'));
      const query = url.slice(url.indexOf('?') + 1);
      for (const candidate of [
        bare,
        `${bare}?${query.replace(/&sig=[^&]*/, '')}`,
        `${url}&sig=${'0'.repeat(64)}`,
      ]) {
        const [response, body] = await fetchProblem(candidate);
        expectProblem(response, body, 403, 'link_invalid');
      }
    });

    it('a link signed with another secret', async () => {
      const expiresAt = (Math.floor(Date.now() / 1000) + 300) * 1000;
      const forged = signMediaLink(host.url, KEY, 'audio/wav', expiresAt, `${MEDIA_SECRET}x`);
      const [response, body] = await fetchProblem(forged);
      expectProblem(response, body, 403, 'link_invalid');
    });
  });

  describe('path traversal', () => {
    before(() => {
      writeFileSync(join(deployment.dir, 'outside.txt'), 'SECRET-OUTSIDE-THE-MEDIA-FOLDER');
      mkdirSync(join(deployment.mediaDir, 'links'), { recursive: true });
      symlinkSync(join(deployment.dir, 'outside.txt'), join(deployment.mediaDir, 'links', 'escape.wav'));
    });

    it('dot segments, encoded or not, are refused before the folder is touched', async () => {
      const { url } = await link();
      const query = url.slice(url.indexOf('?'));
      const targets = [
        '/media/../outside.txt',
        '/media/recordings/../../outside.txt',
        '/media/%2e%2e/outside.txt',
        '/media/%2E%2E%2Foutside.txt',
        '/media/recordings%2F..%2F..%2Foutside.txt',
        '/media//outside.txt',
        '/media/./recordings/doc_a/visit.wav',
        '/media/recordings/doc_a/visit.wav%00',
        '/media/..%5coutside.txt',
      ];
      for (const target of targets) {
        const response = await rawRequest(host.url, `${target}${query}`);
        assert.equal(response.status, 403, target);
        assert.equal(JSON.parse(response.body.toString()).reason_code, 'link_invalid', target);
        assert.equal(response.body.includes('SECRET-OUTSIDE'), false, target);
      }
    });

    it('even a correctly signed link cannot name a key outside the folder', async () => {
      const expiresAt = (Math.floor(Date.now() / 1000) + 300) * 1000;
      const signed = signMediaLink(host.url, '../outside.txt', 'audio/wav', expiresAt, MEDIA_SECRET);
      const response = await rawRequest(host.url, signed.slice(host.url.length));
      assert.equal(response.status, 403);
      assert.equal(response.body.includes('SECRET-OUTSIDE'), false);
      await assert.rejects(deployment.services.media.createLink('../outside.txt', 'audio/wav', 300));
    });

    it('a symlink inside the folder pointing outside it is not followed (404 audio_not_found)', async () => {
      const [response, body] = await fetchProblem((await link('links/escape.wav')).url);
      expectProblem(response, body, 404, 'audio_not_found');
      assert.equal(JSON.stringify(body).includes('SECRET-OUTSIDE'), false);
    });

    it('a folder linked in from outside is refused by the host (404), its file never sent', async () => {
      mkdirSync(join(deployment.dir, 'elsewhere'), { recursive: true });
      writeFileSync(join(deployment.dir, 'elsewhere', 'kept.wav'), 'SECRET-OUTSIDE-THE-MEDIA-FOLDER');
      symlinkSync(join(deployment.dir, 'elsewhere'), join(deployment.mediaDir, 'linked-folder'));
      const [response, body] = await fetchProblem((await link('linked-folder/kept.wav')).url);
      expectProblem(response, body, 404, 'audio_not_found');
      assert.equal(JSON.stringify(body).includes('SECRET-OUTSIDE'), false);
    });
  });

  it('a valid link to an object gone from storage: 404 audio_not_found', async () => {
    await deployment.services.media.put('recordings/gone.wav', Readable.from([OTHER]), 'audio/wav');
    const created = await link('recordings/gone.wav');
    rmSync(join(deployment.mediaDir, 'recordings', 'gone.wav'));
    const [response, body] = await fetchProblem(created.url);
    expectProblem(response, body, 404, 'audio_not_found');
  });

  it("never answers with a code of the API's alone (an API key's, a query's)", () => {
    assert.ok(answered.size >= 6, 'the tests above met the refusals');
    for (const code of answered) assert.notEqual(REASONS[code as ReasonCode].hosts, 'api', code);
  });

  it('times every answer under the route media_host, each status as often as it was answered', async () => {
    const text = await deployment.services.metrics.registry.metrics();
    // Answers by status: the counter has a series per reason code too, summed here.
    const byStatus = (name: string) => {
      const answers: Record<string, number> = {};
      const line = new RegExp(`^${name}\\{([^}]*route="media_host"[^}]*)\\} (\\d+)$`, 'gm');
      for (const [, labels, value] of text.matchAll(line)) {
        const status = /status="(\d+)"/.exec(labels!)![1]!;
        answers[status] = (answers[status] ?? 0) + Number(value);
      }
      return answers;
    };
    const timed = byStatus('eds_http_request_duration_seconds_count');
    assert.deepEqual(timed, byStatus('eds_http_responses_total'), 'every answer counted is timed');
    for (const status of ['200', '206', '403', '404', '405', '410', '416']) {
      assert.ok((timed[status] ?? 0) > 0, `answers of status ${status} are timed`);
    }
  });

  it('never logs a link: no log line holds a signature or a query string, and requests are logged', async () => {
    assert.ok(issued.length > 10, 'the tests above issued links');
    const requestLines = deployment.logs.filter((line) => line.includes('"msg":"media request"'));
    assert.ok(requestLines.length > 20, 'each request is logged');
    assert.ok(requestLines.some((line) => line.includes(`"path":"/media/${KEY}"`)));
    for (const { url } of issued) {
      const sig = new URL(url).searchParams.get('sig')!;
      for (const line of deployment.logs) {
        assert.equal(line.includes(sig), false, 'a signature reached the log');
        assert.equal(line.includes(url), false, 'a link reached the log');
      }
    }
    for (const line of deployment.logs) {
      assert.doesNotMatch(line, /sig=|expires=|[?&]type=/, 'a query string reached the log');
    }
  });
});

describe('media host when the folder cannot be read', () => {
  it('answers 503 audio_storage_unavailable (the folder replaced by a file)', async () => {
    const deployment = createMediaDeployment();
    const host = await startMediaHost(deployment.services);
    try {
      await deployment.services.media.put(KEY, Readable.from([OTHER]), 'audio/wav');
      const { url } = await deployment.services.media.createLink(KEY, 'audio/wav', 300);
      rmSync(deployment.mediaDir, { recursive: true });
      writeFileSync(deployment.mediaDir, 'not a folder');
      const [response, body] = await fetchProblem(url);
      expectProblem(response, body, 503, 'audio_storage_unavailable');
      assert.equal(response.headers.get('retry-after'), '1');
      assert.equal(JSON.stringify(body).includes(deployment.dir), false, 'no machine path in the answer');
    } finally {
      await host.close();
      await deployment.close();
    }
  });
});
