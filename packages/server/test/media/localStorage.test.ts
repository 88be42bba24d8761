/**
 * The local driver on a real folder: what it stores, what `exists` answers, and that a folder
 * which cannot be read (or does not answer) is "storage unavailable", never "object gone".
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMediaStorage } from '../../src/media/index.js';
import { type MediaStorage, StorageUnavailableError } from '../../src/media/storage.js';
import { createMediaDeployment, type MediaDeployment } from './support.js';

const RUNNING_AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

/**
 * `exists` asked by a user the folder's mode applies to: this process, or, when tests run as
 * root (who reads any folder whatever its mode), a child process running as nobody.
 */
function existsAsUnprivileged(dir: string, key: string): { exists?: boolean; error?: string } {
  const probe = fileURLToPath(new URL('./fixtures/existsProbe.ts', import.meta.url));
  const result = spawnSync(process.execPath, ['--import', 'tsx', probe, dir, key], {
    encoding: 'utf8',
    ...(RUNNING_AS_ROOT ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

describe('local storage', () => {
  let deployment: MediaDeployment;
  let media: MediaStorage;
  before(() => {
    deployment = createMediaDeployment();
    media = deployment.services.media;
  });
  after(() => deployment.close());

  it('stores from a stream and from a file, byte for byte, and reports the size', async () => {
    const bytes = randomBytes(70_000);
    const fromStream = await media.put('recordings/a/one.wav', Readable.from([bytes]), 'audio/wav');
    assert.deepEqual(fromStream, { byteSize: bytes.length });
    assert.deepEqual(readFileSync(join(deployment.mediaDir, 'recordings/a/one.wav')), bytes);

    const source = join(deployment.dir, 'source.ogg');
    writeFileSync(source, bytes.subarray(0, 1234));
    assert.deepEqual(await media.put('recordings/b/two.ogg', source, 'audio/ogg'), { byteSize: 1234 });
    assert.deepEqual(
      readFileSync(join(deployment.mediaDir, 'recordings/b/two.ogg')),
      bytes.subarray(0, 1234),
    );
  });

  it('replaces an object whole and leaves no partial files behind', async () => {
    await media.put('recordings/c/x.wav', Readable.from([Buffer.from('first version')]), 'audio/wav');
    await media.put('recordings/c/x.wav', Readable.from([Buffer.from('second')]), 'audio/wav');
    assert.equal(readFileSync(join(deployment.mediaDir, 'recordings/c/x.wav'), 'utf8'), 'second');
    assert.deepEqual(readdirSync(join(deployment.mediaDir, 'recordings/c')), ['x.wav']);
  });

  it('a failed upload leaves nothing, not even a partial file', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('source broke'));
      },
    });
    await assert.rejects(media.put('recordings/d/broken.wav', failing, 'audio/wav'), /source broke/);
    assert.deepEqual(readdirSync(join(deployment.mediaDir, 'recordings/d')), []);
    assert.equal(await media.exists('recordings/d/broken.wav'), false);
  });

  it('exists: true for a stored object, false for a missing one or a folder', async () => {
    await media.put('recordings/e/here.wav', Readable.from([Buffer.from('x')]), 'audio/wav');
    assert.equal(await media.exists('recordings/e/here.wav'), true);
    assert.equal(await media.exists('recordings/e/absent.wav'), false);
    assert.equal(await media.exists('recordings/no-such-folder/absent.wav'), false);
    assert.equal(await media.exists('recordings/e'), false);
    assert.equal(await media.exists('recordings/e/here.wav/below'), false);
  });

  it('exists: false, promptly, for something in the folder that is not a file (a FIFO)', async () => {
    execFileSync('mkfifo', [join(deployment.mediaDir, 'recordings/e/pipe.wav')]);
    assert.equal(await media.exists('recordings/e/pipe.wav'), false);
  });

  it('exists: a symbolic link is followed only to a regular file inside the folder', async () => {
    await media.put('recordings/f/target.wav', Readable.from([Buffer.from('x')]), 'audio/wav');
    writeFileSync(join(deployment.dir, 'beyond.wav'), 'outside');
    const link = (name: string, target: string) =>
      symlinkSync(target, join(deployment.mediaDir, 'recordings/f', name));
    link('inside.wav', join(deployment.mediaDir, 'recordings/f/target.wav'));
    link('relative.wav', 'target.wav');
    link('outside.wav', join(deployment.dir, 'beyond.wav'));
    link('dangling.wav', join(deployment.mediaDir, 'recordings/f/never.wav'));
    link('to-folder.wav', join(deployment.mediaDir, 'recordings/f'));
    assert.equal(await media.exists('recordings/f/inside.wav'), true);
    assert.equal(await media.exists('recordings/f/relative.wav'), true);
    assert.equal(await media.exists('recordings/f/outside.wav'), false);
    assert.equal(await media.exists('recordings/f/dangling.wav'), false);
    assert.equal(await media.exists('recordings/f/to-folder.wav'), false);
  });

  it('refuses keys that would leave the folder', async () => {
    writeFileSync(join(deployment.dir, 'outside.wav'), 'outside');
    assert.equal(await media.exists('../outside.wav'), false);
    assert.equal(await media.exists('/etc/passwd'), false);
    await assert.rejects(media.put('../escaped.wav', Readable.from([Buffer.from('x')]), 'audio/wav'));
    await assert.rejects(media.createLink('a/../../outside.wav', 'audio/wav', 300));
    assert.deepEqual(
      readdirSync(deployment.dir).filter((name) => name.startsWith('escaped')),
      [],
      'nothing was written outside the folder',
    );
  });

  it("createLink: expiresAt is the link's own expiry, ttl seconds from now on a whole second", async () => {
    const before = Date.now();
    const link = await media.createLink('recordings/e/here.wav', 'audio/wav', 300);
    const expires = Number(new URL(link.url).searchParams.get('expires'));
    assert.equal(link.expiresAt, expires * 1000);
    assert.equal(link.expiresAt % 1000, 0);
    assert.ok(link.expiresAt > before + 299_000 && link.expiresAt <= Date.now() + 300_000);
  });
});

/**
 * Why the unprivileged probe cannot run here, if it cannot: as root, the child runs as nobody, who
 * must be able to reach this Node.js binary (one unpacked under root's home is out of its reach).
 */
function unprivilegedProbeUnavailable(): string | undefined {
  if (!RUNNING_AS_ROOT) return undefined;
  const probe = spawnSync(process.execPath, ['--version'], { uid: NOBODY, gid: NOBODY });
  return probe.status === 0
    ? undefined
    : `user nobody cannot run ${process.execPath}: install Node.js where every user can reach it`;
}

describe('local storage when the folder cannot be read', () => {
  it('a folder without read permission (chmod 000): StorageUnavailableError, not "missing"', async (t) => {
    const unavailable = unprivilegedProbeUnavailable();
    if (unavailable) return t.skip(unavailable);
    const deployment = createMediaDeployment();
    try {
      await deployment.services.media.put('r/a.wav', Readable.from([Buffer.from('x')]), 'audio/wav');
      // Stored private (0600 in 0700 folders); opened up here so only the folder's mode decides.
      for (const path of [deployment.dir, deployment.mediaDir, join(deployment.mediaDir, 'r')])
        chmodSync(path, 0o755);
      chmodSync(join(deployment.mediaDir, 'r/a.wav'), 0o644);
      assert.deepEqual(existsAsUnprivileged(deployment.mediaDir, 'r/a.wav'), { exists: true }, 'readable');
      chmodSync(deployment.mediaDir, 0o000);
      for (const key of ['r/a.wav', 'r/missing.wav']) {
        assert.deepEqual(existsAsUnprivileged(deployment.mediaDir, key), {
          error: 'StorageUnavailableError',
        });
      }
    } finally {
      chmodSync(deployment.mediaDir, 0o700);
      await deployment.close();
    }
  });

  it('the folder replaced by a file: StorageUnavailableError, not "missing"', async () => {
    const deployment = createMediaDeployment();
    try {
      rmSync(deployment.mediaDir, { recursive: true });
      writeFileSync(deployment.mediaDir, 'not a folder');
      await assert.rejects(deployment.services.media.exists('r/a.wav'), StorageUnavailableError);
    } finally {
      await deployment.close();
    }
  });

  it('the folder gone after start-up: StorageUnavailableError', async () => {
    const deployment = createMediaDeployment();
    try {
      rmSync(deployment.mediaDir, { recursive: true });
      await assert.rejects(deployment.services.media.exists('r/a.wav'), StorageUnavailableError);
    } finally {
      await deployment.close();
    }
  });

  it('a fresh deployment with nothing stored yet: missing objects are simply absent', async () => {
    const deployment = createMediaDeployment();
    try {
      assert.equal(await deployment.services.media.exists('recordings/never-stored.wav'), false);
    } finally {
      await deployment.close();
    }
  });

  it('a folder that does not answer: StorageUnavailableError within the storage timeout', async () => {
    // A hung disk or network mount blocks the file-system threads; here every thread of libuv's
    // pool is parked in open() on a FIFO nobody writes to, so the driver's own calls queue forever.
    const deployment = createMediaDeployment({ EDS_STORAGE_TIMEOUT_MS: '200' });
    const poolSize = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const fifos = Array.from({ length: poolSize }, (_, i) => join(deployment.dir, `stuck-${i}`));
    for (const fifo of fifos) execFileSync('mkfifo', [fifo]);
    const parked = fifos.map((fifo) => open(fifo, 'r'));
    try {
      // libuv's pool takes work in order: the driver's calls queue behind the parked opens.
      const started = performance.now();
      await assert.rejects(deployment.services.media.exists('r/a.wav'), (error: unknown) => {
        assert.ok(error instanceof StorageUnavailableError);
        assert.match(error.message, /did not answer within 200 ms/);
        return true;
      });
      // Answered at all, with the pool parked for good, is the bound; how soon after 200 ms is
      // the machine's load.
      const elapsed = performance.now() - started;
      assert.ok(elapsed >= 190, `answered after ${Math.round(elapsed)} ms, before the timeout`);
    } finally {
      await releaseFifos(fifos, parked);
      await deployment.close();
    }
  });
});

/** Opens each FIFO's writing end (without blocking) so the parked open() calls return. */
async function releaseFifos(fifos: string[], parked: Promise<FileHandle>[]): Promise<void> {
  const pending = new Set(fifos);
  const deadline = Date.now() + 5000;
  while (pending.size > 0 && Date.now() < deadline) {
    for (const fifo of pending) {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        pending.delete(fifo);
      } catch {
        // ENXIO: its reader has not reached open() yet; try again shortly.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  for (const handle of await Promise.all(parked)) await handle.close();
}

describe('createMediaStorage', () => {
  it('builds the driver the configuration names, with its clock', async () => {
    const deployment = createMediaDeployment();
    try {
      const fixed = Date.parse('2026-05-01T15:00:00.400Z');
      const media = createMediaStorage(deployment.config, () => fixed);
      assert.equal(media.driver, 'local');
      const link = await media.createLink('r/a.wav', 'audio/wav', 3600);
      assert.equal(new Date(link.expiresAt).toISOString(), '2026-05-01T16:00:00.000Z');
    } finally {
      await deployment.close();
    }
  });
});
