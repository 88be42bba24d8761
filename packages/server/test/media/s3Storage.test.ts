/**
 * The S3 driver against a real S3-compatible server on loopback (s3rver, from the npm registry),
 * and against endpoints that refuse, stall or fail. s3rver does not check SigV4 signatures, so
 * every presigned link is also recomputed with an independent SigV4 implementation (aws4).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import aws4 from 'aws4';
import S3rver from 's3rver';
import { loadConfig } from '../../src/config.js';
import { createMediaStorage } from '../../src/media/index.js';
import { type MediaStorage, StorageUnavailableError } from '../../src/media/storage.js';

const BUCKET = 'eds-recordings';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }; // s3rver's built-in account
const REGION = 'eu-west-3';
const PREFIX = 'tenant-a/audio';

/** A config for the s3 driver, built by the real loader from environment-style values. */
function s3Config(endpoint: string, dir: string, env: Record<string, string> = {}) {
  return loadConfig(
    {
      EDS_KEY_DIGEST_SECRET: 'media-test-digest-secret-0123456789',
      EDS_MEDIA_SIGNING_SECRET: 'media-test-signing-secret-0123456789',
      EDS_DATABASE_URL: join(dir, 'eds.sqlite'),
      EDS_STORAGE_DRIVER: 's3',
      EDS_S3_BUCKET: BUCKET,
      EDS_S3_REGION: REGION,
      EDS_S3_ENDPOINT: endpoint,
      EDS_S3_FORCE_PATH_STYLE: 'true',
      EDS_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      EDS_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      EDS_S3_PREFIX: PREFIX,
      EDS_STORAGE_TIMEOUT_MS: '300',
      ...env,
    },
    dir,
  );
}

/**
 * The SigV4 query signature of a presigned GET, recomputed by aws4 from the URL's own date,
 * expiry and parameters (everything but the signature itself).
 */
function recomputeSignature(presigned: string, secretAccessKey = CREDENTIALS.secretAccessKey): string {
  const url = new URL(presigned);
  url.searchParams.delete('X-Amz-Signature');
  const signed = aws4.sign(
    {
      host: url.host,
      path: url.pathname + url.search,
      method: 'GET',
      service: 's3',
      region: REGION,
      signQuery: true,
    },
    { accessKeyId: CREDENTIALS.accessKeyId, secretAccessKey },
  );
  return new URL(signed.path ?? '', 'http://unused').searchParams.get('X-Amz-Signature') ?? '';
}

describe('s3 storage on a real S3-compatible server (s3rver)', () => {
  let dir: string;
  let server: S3rver;
  let endpoint: string;
  let media: MediaStorage;
  let now: number | undefined;
  const RECORDING = randomBytes(200_000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eds-s3-test-'));
    server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: join(dir, 's3rver'),
      configureBuckets: [{ name: BUCKET, configs: [] }],
    });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    // A generous bound here: a cold first call under a loaded test run can pass 300 ms.
    const config = s3Config(endpoint, dir, { EDS_STORAGE_TIMEOUT_MS: '5000' });
    media = createMediaStorage(config, () => now ?? Date.now());
  });

  after(async () => {
    await media.close?.();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('put from a stream and from a file; exists answers true, and false for a missing object', async () => {
    assert.equal(media.driver, 's3');
    assert.deepEqual(await media.put('recordings/doc_1/a.wav', Readable.from([RECORDING]), 'audio/wav'), {
      byteSize: RECORDING.length,
    });
    const file = join(dir, 'b.ogg');
    writeFileSync(file, RECORDING.subarray(0, 999));
    assert.deepEqual(await media.put('recordings/doc_2/b.ogg', file, 'audio/ogg'), { byteSize: 999 });
    assert.equal(await media.exists('recordings/doc_1/a.wav'), true);
    assert.equal(await media.exists('recordings/doc_2/b.ogg'), true);
    assert.equal(await media.exists('recordings/doc_1/missing.wav'), false);
    assert.equal(await media.exists('../escape.wav'), false);
  });

  it('stores objects under the configured prefix, with their content type', async () => {
    const client = new S3Client({ region: REGION, endpoint, forcePathStyle: true, credentials: CREDENTIALS });
    try {
      const head = await client.send(
        new HeadObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}/recordings/doc_1/a.wav` }),
      );
      assert.equal(head.ContentLength, RECORDING.length);
      assert.equal(head.ContentType, 'audio/wav');
    } finally {
      client.destroy();
    }
  });

  it('a presigned link, fetched in time, returns the exact bytes, ranges included', async () => {
    const link = await media.createLink('recordings/doc_1/a.wav', 'audio/wav', 300);
    const whole = await fetch(link.url);
    assert.equal(whole.status, 200);
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), RECORDING);
    assert.equal(whole.headers.get('content-type'), 'audio/wav');
    assert.equal(whole.headers.get('cache-control'), 'private, no-store');
    // (Not a suffix range: s3rver answers `bytes=-N` as `bytes=0-N`, unlike S3.)
    const part = await fetch(link.url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${RECORDING.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), RECORDING.subarray(100, 200));
  });

  it("expiresAt is exactly the presigned URL's own expiry (X-Amz-Date + X-Amz-Expires)", async () => {
    now = Date.parse('2026-05-01T15:00:00.750Z');
    try {
      const link = await media.createLink('recordings/doc_1/a.wav', 'audio/wav', 3600);
      const query = new URL(link.url).searchParams;
      assert.equal(query.get('X-Amz-Date'), '20260501T150000Z');
      assert.equal(query.get('X-Amz-Expires'), '3600');
      assert.equal(new Date(link.expiresAt).toISOString(), '2026-05-01T16:00:00.000Z');
    } finally {
      now = undefined;
    }
  });

  it('the presigned URL carries a valid SigV4 signature, checked by an independent implementation', async () => {
    const link = await media.createLink('recordings/doc_2/b.ogg', 'audio/ogg', 300);
    const url = new URL(link.url);
    assert.equal(url.pathname, `/${BUCKET}/${PREFIX}/recordings/doc_2/b.ogg`);
    assert.equal(url.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
    assert.match(
      url.searchParams.get('X-Amz-Credential') ?? '',
      new RegExp(`^S3RVER/\\d{8}/${REGION}/s3/aws4_request$`),
    );
    assert.equal(url.searchParams.get('response-content-type'), 'audio/ogg');
    const given = url.searchParams.get('X-Amz-Signature');
    assert.match(given ?? '', /^[0-9a-f]{64}$/);
    assert.equal(recomputeSignature(link.url), given);

    // The check is sensitive: another object, a later expiry or another secret do not match.
    const otherObject = link.url.replace('/b.ogg?', '/a.ogg?');
    const laterExpiry = link.url.replace('X-Amz-Expires=300', 'X-Amz-Expires=3000');
    assert.notEqual(recomputeSignature(otherObject), given);
    assert.notEqual(recomputeSignature(laterExpiry), given);
    assert.notEqual(recomputeSignature(link.url, 'another-secret'), given);
  });

  it('a non-audio content type is presigned as opaque bytes', async () => {
    const link = await media.createLink('recordings/doc_2/b.ogg', 'text/html', 300);
    assert.equal(new URL(link.url).searchParams.get('response-content-type'), 'application/octet-stream');
  });
});

/** A storage timeout no retry schedule of the client reaches. */
const NO_HURRY = { EDS_STORAGE_TIMEOUT_MS: '60000' };

describe('s3 storage when the endpoint fails', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'eds-s3-fail-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * `exists` rejects with StorageUnavailableError: its message and how long it took. No upper
   * bound on the time: a loaded machine answers late, and the message tells a refusal from a wait.
   * A refusal or an error answer is asked with a timeout far beyond the client's own retries, so
   * what comes back is what the endpoint did, not the timeout.
   */
  async function expectUnavailable(
    endpoint: string,
    env: Record<string, string> = {},
  ): Promise<{ message: string; elapsed: number }> {
    const media = createMediaStorage(s3Config(endpoint, dir, env));
    const started = performance.now();
    let message = '';
    try {
      await assert.rejects(media.exists('recordings/doc_1/a.wav'), (error: unknown) => {
        assert.ok(error instanceof StorageUnavailableError);
        message = error.message;
        return true;
      });
    } finally {
      await media.close?.();
    }
    return { message, elapsed: performance.now() - started };
  }

  it('an endpoint refusing connections (a closed loopback port): unavailable for the refusal, not after the timeout', async () => {
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { message } = await expectUnavailable(`http://127.0.0.1:${port}`, NO_HURRY);
    assert.match(message, /ECONNREFUSED/, 'the refusal, not a wait for the timeout');
  });

  it('an endpoint that accepts and never answers: unavailable after the storage timeout (300 ms)', async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const { message, elapsed } = await expectUnavailable(`http://127.0.0.1:${port}`);
      assert.equal(message, 'object store did not answer within 300 ms');
      assert.ok(elapsed >= 280, `gave up after ${Math.round(elapsed)} ms, before the timeout`);
      assert.ok(sockets.length > 0, 'the driver did connect');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  for (const status of [500, 503, 403]) {
    it(`an endpoint answering ${status}: unavailable (not "missing")`, async () => {
      let requests = 0;
      const failing: Server = createHttpServer((_req, res) => {
        requests += 1;
        res.writeHead(status, { 'Content-Type': 'application/xml' }).end();
      });
      await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
      const { port } = failing.address() as { port: number };
      try {
        const { message } = await expectUnavailable(`http://127.0.0.1:${port}`, NO_HURRY);
        assert.match(message, /^object store error/, 'the answer, not a wait for the timeout');
        assert.ok(requests > 0);
      } finally {
        failing.closeAllConnections();
        await new Promise<void>((resolve) => failing.close(() => resolve()));
      }
    });
  }
});
