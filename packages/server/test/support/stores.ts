/**
 * Real stores for tests: a fresh SQLite file in a temporary folder, or a fresh PostgreSQL
 * database created from TEST_DATABASE_URL (dropped afterwards), so runs never see each other.
 * `forEachStore` runs a suite on every store this machine offers and says so when it skips one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/database/connection.js';
import { upgradeStore } from '../../src/upgradeStore.js';

export type StoreKind = 'sqlite' | 'postgres';

const PG_URL = process.env.TEST_DATABASE_URL;

export function storeKinds(): StoreKind[] {
  return PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** `describe` once per store; without TEST_DATABASE_URL the PostgreSQL run is a visible skip. */
export function forEachStore(name: string, suite: (kind: StoreKind) => void): void {
  describe(`${name} [sqlite]`, () => suite('sqlite'));
  if (PG_URL) describe(`${name} [postgres]`, () => suite('postgres'));
  else
    describe(`${name} [postgres]`, {
      skip: 'TEST_DATABASE_URL is not set: PostgreSQL run skipped',
    }, () => {});
}

export interface TestDatabase {
  kind: StoreKind;
  /** What EDS_DATABASE_URL would be for a subprocess using this database. */
  url: string;
  config: DatabaseConfig;
  /** A folder that lives as long as the database (data dir, media, secrets). */
  dir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(kind: StoreKind): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'eds-test-'));
  if (kind === 'sqlite') {
    const path = join(dir, 'eds.sqlite');
    return {
      kind,
      url: path,
      config: { dialect: 'sqlite', path },
      dir,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (!PG_URL) throw new Error('TEST_DATABASE_URL is not set');
  const name = `eds_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    kind,
    url: url.toString(),
    config: { dialect: 'postgres', url: url.toString(), poolSize: 5, statementTimeoutMs: 10_000 },
    dir,
    drop: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A migrated store on a fresh database; `close` also drops the database. */
export async function createTestStore(kind: StoreKind): Promise<Store & { database: TestDatabase }> {
  const store = await createUnmigratedStore(kind);
  await upgradeStore(store.db);
  return store;
}

/**
 * A store on a fresh database with no migration run yet, for the tests of the migrations
 * themselves; `close` also drops the database.
 */
export async function createUnmigratedStore(kind: StoreKind): Promise<Store & { database: TestDatabase }> {
  const database = await createTestDatabase(kind);
  const store = openStore(database.config);
  return {
    ...store,
    database,
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
}
