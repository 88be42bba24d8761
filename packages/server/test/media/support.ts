/**
 * Media tests run against real folders, real sockets and the real configuration loader. This
 * builds one "deployment": a temporary folder, a config from environment-style values, services
 * whose log lines are captured, and a clock the test can move.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Config, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices, type Services } from '../../src/services.js';

export const MEDIA_SECRET = 'media-test-signing-secret-0123456789';

export interface MediaDeployment {
  readonly dir: string;
  readonly mediaDir: string;
  readonly config: Config;
  readonly services: Services;
  /** Every log line written so far. */
  readonly logs: string[];
  /** The clock services (and so the media host) read; set `now.ms` to move it. */
  readonly now: { ms: number | undefined };
  close(): Promise<void>;
}

export function createMediaDeployment(env: Record<string, string> = {}): MediaDeployment {
  const dir = mkdtempSync(join(tmpdir(), 'eds-media-test-'));
  const mediaDir = join(dir, 'media');
  const config = loadConfig(
    {
      EDS_KEY_DIGEST_SECRET: 'media-test-digest-secret-0123456789',
      EDS_MEDIA_SIGNING_SECRET: MEDIA_SECRET,
      EDS_DATABASE_URL: join(dir, 'eds.sqlite'),
      EDS_MEDIA_DIR: mediaDir,
      EDS_PORT: '0',
      EDS_MEDIA_PORT: '0',
      EDS_LOG_LEVEL: 'debug',
      EDS_SHUTDOWN_GRACE_MS: '0',
      ...env,
    },
    dir,
  );
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const now: { ms: number | undefined } = { ms: undefined };
  const services = createServices(config, {
    logger: createLogger(config.logLevel, sink),
    clock: () => now.ms ?? Date.now(),
  });
  return {
    dir,
    mediaDir,
    config,
    services,
    logs,
    now,
    async close() {
      await services.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * A request with the target sent byte for byte: fetch normalizes `..` and `//` away before
 * sending, which would hide exactly the traversal attempts a test wants to make.
 */
export function rawRequest(baseUrl: string, target: string, method = 'GET'): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: target, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
