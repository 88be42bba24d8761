/**
 * Secrets come from the environment (or `NAME_FILE`, the container-secrets convention). A
 * development deployment without them makes its own once and keeps them beside the database so
 * keys stay valid across restarts; production refuses to start and names what is missing.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../privateFiles.js';
import type { Config } from './types.js';

export const SECRET_NAMES = {
  keyDigest: 'EDS_KEY_DIGEST_SECRET',
  mediaSigning: 'EDS_MEDIA_SIGNING_SECRET',
} as const;

type SecretKey = keyof typeof SECRET_NAMES;
type Secrets = Omit<Config['secrets'], 'keyDigestPrevious'>;

export function loadSecrets(
  given: Partial<Record<SecretKey, string>>,
  production: boolean,
  dataDir: string,
  fail: (name: string, message: string) => void,
): Secrets {
  if (given.keyDigest && given.mediaSigning) {
    return { keyDigest: given.keyDigest, mediaSigning: given.mediaSigning, source: 'environment' };
  }
  if (production) {
    const missing = Object.entries(SECRET_NAMES)
      .filter(([key]) => !given[key as SecretKey])
      .map(([, name]) => name);
    fail(missing.join(', '), 'is required when NODE_ENV=production (set it or NAME_FILE)');
    return { keyDigest: '', mediaSigning: '', source: 'environment' };
  }
  const file = join(dataDir, 'secrets.json');
  let stored: Partial<Record<SecretKey, string>> = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, 'utf8'));
  const merged = {
    keyDigest: given.keyDigest ?? stored.keyDigest ?? randomBytes(32).toString('base64url'),
    mediaSigning: given.mediaSigning ?? stored.mediaSigning ?? randomBytes(32).toString('base64url'),
  };
  if (stored.keyDigest !== merged.keyDigest || stored.mediaSigning !== merged.mediaSigning) {
    makePrivateDir(dataDir);
    writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
    chmodSync(file, PRIVATE_FILE_MODE);
  }
  return { ...merged, source: 'generated-file' };
}
