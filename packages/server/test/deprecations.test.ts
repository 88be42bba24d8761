/**
 * The operator's announcement of a route's retirement (`EDS_DEPRECATIONS`): read once at
 * start-up, and refused with a message naming what is wrong, so a typo cannot silently leave a
 * route unannounced.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

const BASE = { EDS_KEY_DIGEST_SECRET: 'd'.repeat(32), EDS_MEDIA_SIGNING_SECRET: 'm'.repeat(32) };
const load = (deprecations: string) =>
  loadConfig({ ...BASE, EDS_DATABASE_URL: ':memory:', EDS_DEPRECATIONS: deprecations }, '/tmp');

const valid = {
  deprecation: '2026-12-01T00:00:00Z',
  sunset: '2027-06-01T00:00:00Z',
  link: '/docs/guides/changelog',
};

test('happy: an announced route is read with its dates and notice', () => {
  const config = load(JSON.stringify({ getAudio: valid }));
  assert.deepEqual(config.deprecations, {
    getAudio: {
      deprecatedAt: Date.parse('2026-12-01T00:00:00Z'),
      sunsetAt: Date.parse('2027-06-01T00:00:00Z'),
      link: '/docs/guides/changelog',
    },
  });
});

test('happy: without the setting no route is deprecated', () => {
  const config = loadConfig({ ...BASE, EDS_DATABASE_URL: ':memory:' }, '/tmp');
  assert.deepEqual(config.deprecations, {});
});

const refusals: [string, string, RegExp][] = [
  ['not JSON', '{getAudio:', /EDS_DEPRECATIONS must be a JSON object keyed by operation ID/],
  ['an array', '[]', /EDS_DEPRECATIONS must be a JSON object keyed by operation ID/],
  [
    'an unknown operation ID',
    JSON.stringify({ getAudios: valid }),
    /"getAudios", which is not an operation ID/,
  ],
  [
    'a date without an offset',
    JSON.stringify({ getAudio: { ...valid, deprecation: '2026-12-01T00:00:00' } }),
    /getAudio: deprecation must be an RFC 3339 date-time/,
  ],
  [
    'a sunset less than 180 days after the deprecation',
    JSON.stringify({ getAudio: { ...valid, sunset: '2027-05-29T00:00:00Z' } }),
    /getAudio: sunset must be at least 180 days after deprecation/,
  ],
  [
    'a notice that is not a URL or a path',
    JSON.stringify({ getAudio: { ...valid, link: 'javascript:alert(1)' } }),
    /getAudio: link must be an http\(s\) URL or a path/,
  ],
  [
    'an unknown key',
    JSON.stringify({ getAudio: { ...valid, sunest: valid.sunset } }),
    /getAudio: has unknown key\(s\) sunest/,
  ],
];

for (const [what, value, message] of refusals) {
  test(`error: ${what} in EDS_DEPRECATIONS stops start-up with a message`, () => {
    assert.throws(
      () => load(value),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
    );
  });
}
