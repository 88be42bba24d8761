import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readEnvironment } from '../../src/config/environment.js';
import { SETTINGS } from '../../src/config/settings.js';
import { scratchDir } from '../support/scratchDir.js';

test('settings not given take the schema defaults, and none is reported', () => {
  const { values, problems } = readEnvironment(SETTINGS, {});
  assert.deepEqual(problems, []);
  assert.equal(values.EDS_PORT, 8080);
  assert.equal(values.EDS_WEBHOOK_JITTER, 0.2);
  assert.deepEqual(values.EDS_WEBHOOK_RETRY_SCHEDULE, [5, 300, 1800, 7200, 18000, 36000, 36000]);
  assert.equal(values.EDS_ADMIN_PORT, undefined);
});

test('text becomes the schema type: whole numbers, booleans, durations, lists', () => {
  const { values, problems } = readEnvironment(SETTINGS, {
    EDS_PORT: ' 9000 ',
    EDS_API_KEYS_ENABLED: 'Off',
    EDS_WEBHOOK_PAUSE_AFTER: '30m',
    EDS_WEBHOOK_RETRY_SCHEDULE: '1, 2.5',
    EDS_LOG_LEVEL: 'debug',
  });
  assert.deepEqual(problems, []);
  assert.equal(values.EDS_PORT, 9000);
  assert.equal(values.EDS_API_KEYS_ENABLED, false);
  assert.equal(values.EDS_WEBHOOK_PAUSE_AFTER, 1_800_000);
  assert.deepEqual(values.EDS_WEBHOOK_RETRY_SCHEDULE, [1, 2.5]);
});

test('each refused value is named with the sentence its schema implies, in the schema order', () => {
  const { problems } = readEnvironment(SETTINGS, {
    EDS_PORT: '65536',
    EDS_LOG_LEVEL: 'loud',
    EDS_API_KEYS_ENABLED: 'maybe',
    EDS_WEBHOOK_HEADER_PREFIX: 'X_',
    EDS_WEBHOOK_RETRY_SCHEDULE: '5,-1',
    EDS_WEBHOOK_JITTER: '0.6',
    EDS_WEBHOOK_PAUSE_AFTER: '0',
    EDS_REDIS_URL: 'http://cache',
    EDS_TRUST_PROXY: '10.0.0.0/33',
    EDS_PUBLIC_BASE_URL: 'ftp://x',
  });
  assert.deepEqual(problems, [
    'EDS_PORT must be a whole number from 0 to 65535',
    'EDS_PUBLIC_BASE_URL must be an http(s) URL',
    'EDS_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    'EDS_API_KEYS_ENABLED must be true or false',
    'EDS_WEBHOOK_HEADER_PREFIX must match /^[A-Za-z][A-Za-z0-9]*-$/',
    'EDS_WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of non-negative seconds',
    'EDS_WEBHOOK_JITTER must be a number from 0 to 0.5',
    'EDS_WEBHOOK_PAUSE_AFTER must be a duration of at least 1 s, like 72h, 30m or 3600',
    'EDS_REDIS_URL must be a redis:// or rediss:// URL with a host',
    'EDS_TRUST_PROXY must be a comma-separated list of IP addresses or CIDRs',
  ]);
});

test('a secret is read from NAME_FILE when NAME is not given; an unreadable file is named', () => {
  const dir = scratchDir('settings-');
  const file = join(dir, 'digest');
  writeFileSync(file, 'from-the-file\n');
  const read = readEnvironment(SETTINGS, { EDS_KEY_DIGEST_SECRET_FILE: file });
  assert.equal(read.values.EDS_KEY_DIGEST_SECRET, 'from-the-file');
  const missing = readEnvironment(SETTINGS, { EDS_MEDIA_SIGNING_SECRET_FILE: join(dir, 'none') });
  assert.deepEqual(missing.problems, ['EDS_MEDIA_SIGNING_SECRET_FILE names a file that cannot be read']);
  // A setting without a file form ignores NAME_FILE.
  assert.equal(readEnvironment(SETTINGS, { EDS_HOST_FILE: file }).values.EDS_HOST, '127.0.0.1');
});

test("a driver's settings are read only when it is chosen, and its required ones then required", () => {
  assert.deepEqual(
    readEnvironment(SETTINGS, { EDS_DB_POOL_SIZE: 'many', EDS_S3_ENDPOINT: 'x' }).problems,
    [],
  );
  assert.deepEqual(
    readEnvironment(SETTINGS, { EDS_DATABASE_URL: 'postgres://db/eds', EDS_DB_POOL_SIZE: 'many' }).problems,
    ['EDS_DB_POOL_SIZE must be a whole number from 1 to 500'],
  );
  assert.deepEqual(readEnvironment(SETTINGS, { EDS_STORAGE_DRIVER: 's3' }).problems, [
    'EDS_S3_BUCKET is required',
  ]);
});
