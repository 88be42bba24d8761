import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { hmacSha256 } from '../src/hmacSha256.js';

test('happy: the digest equals HMAC-SHA256 keyed by the secret string’s UTF-8 bytes, non-ASCII included', () => {
  for (const secret of ['digest-secret-0123456789abcdef', 'clé-secrète-ü-😀', 'x']) {
    const expected = createHmac('sha256', secret).update('eds_live_token', 'utf8').digest('hex');
    assert.equal(hmacSha256(secret).update('eds_live_token', 'utf8').digest('hex'), expected);
    // A second use takes the imported key and gives the same bytes.
    assert.equal(hmacSha256(secret).update('eds_live_token', 'utf8').digest('hex'), expected);
  }
});

test('happy: more secrets than the process keeps imported still give each its own digest', () => {
  for (let i = 0; i < 2100; i++) {
    const secret = `endpoint-secret-${i}`;
    assert.equal(
      hmacSha256(secret).update('1700000000.{}').digest('hex'),
      createHmac('sha256', secret).update('1700000000.{}').digest('hex'),
    );
  }
  assert.equal(
    hmacSha256('endpoint-secret-7').update('body').digest('hex'),
    createHmac('sha256', 'endpoint-secret-7').update('body').digest('hex'),
  );
});
