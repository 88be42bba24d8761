/**
 * The benchmarks' data sets: N demo encounters on SQLite (a data directory beside the results) or
 * PostgreSQL (a database of the server named by TEST_DATABASE_URL), built once by `eds demo` and
 * reused by every later run on the same store and size.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { generateToken } from '../packages/server/src/auth/token.js';
import { eds } from './processes.js';

export interface DatasetPlace {
  store: string;
  encounters: number;
  /** The benchmark's results directory, where SQLite data sets and their markers live. */
  results: string;
}

export interface Dataset {
  organizationId: string;
}

const SECRETS = {
  EDS_KEY_DIGEST_SECRET: 'bench-digest-secret-0123456789abcdef',
  EDS_MEDIA_SIGNING_SECRET: 'bench-media-secret-0123456789abcdef',
};

/** The PostgreSQL server's administrative connection (TEST_DATABASE_URL). */
export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function adminQuery(text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** A database of the server named by TEST_DATABASE_URL. */
export function pgUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Where a data set lives: `label` is '' for this code's own, 'before'/'after' when comparing. */
export function datasetLocation(place: DatasetPlace, label: string) {
  const { store, encounters: n, results } = place;
  const suffix = label ? `-${label}` : '';
  const dataDir = join(results, `data-${store}-${n}${suffix}`);
  const dbName = `eds_bench_${n}${label ? `_${label}` : ''}`;
  return {
    dataDir,
    dbName,
    url: store === 'sqlite' ? join(dataDir, 'eds.sqlite') : pgUrl(dbName),
    marker: join(results, `dataset-${store}-${n}${suffix}.json`),
  };
}

/**
 * The environment of `eds` commands and servers on a data set (servers pick their own ports):
 * production mode, with rate limits off, since the benchmarks drive one key and one address at
 * saturation and would otherwise measure 429s.
 */
export function datasetEnv(place: DatasetPlace, label: string): Record<string, string> {
  const where = datasetLocation(place, label);
  return {
    ...SECRETS,
    EDS_DATABASE_URL: where.url,
    EDS_DATA_DIR: where.dataDir,
    EDS_LOG_LEVEL: process.env.EDS_LOG_LEVEL ?? 'warn',
    NODE_ENV: 'production',
    EDS_DB_POOL_SIZE: '16',
    EDS_RATE_LIMIT_PER_KEY: '0',
    EDS_RATE_LIMIT_UNAUTHENTICATED: '0',
  };
}

/** Builds a data set once with `root`'s `eds demo`, then reuses it (after `eds migrate`). */
export async function buildDataset(
  place: DatasetPlace,
  label: string,
  env: Record<string, string>,
  root: string,
): Promise<Dataset> {
  const where = datasetLocation(place, label);
  if (existsSync(where.marker)) {
    eds(['migrate'], env, root);
    return JSON.parse(readFileSync(where.marker, 'utf8'));
  }
  if (place.store === 'postgres') {
    await adminQuery(`DROP DATABASE IF EXISTS ${where.dbName}`);
    await adminQuery(`CREATE DATABASE ${where.dbName}`);
  }
  const started = Date.now();
  const demo = eds(['demo', '--encounters', String(place.encounters), '--seed', '1'], env, root);
  console.error(
    `data set (${label || 'this code'}): ${place.encounters} encounters in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  // The load leaves PostgreSQL's buffers dirty for a checkpoint spread over the next minutes, which
  // coincided with the first route measured (a p99 of 62-262 ms; 21-23 ms once written out here).
  // Written out now, the routes measure serving, not the load's aftermath.
  if (place.store === 'postgres') await adminQuery('CHECKPOINT');
  const dataset = { organizationId: demo.organization_id };
  writeFileSync(where.marker, JSON.stringify(dataset));
  return dataset;
}

/** The shape of a live key with a checksum that cannot match: refused before any store read. */
export const MALFORMED_TOKEN = `eds_live_${'0'.repeat(37)}A`;

/** A key of the data set's organization with every read scope. */
export function mintKey(organizationId: string, env: Record<string, string>, root: string): string {
  return eds(
    [
      'key',
      'create',
      '--org',
      organizationId,
      '--scopes',
      'encounters:read,patients:read,documents:read,recordings:read',
    ],
    env,
    root,
  ).token;
}

const LIST = '/external/v1/encounters?limit=50';

interface ListedEncounter {
  encounter_id: string;
  documents: { document_id: string; schema_type: string }[];
}

/**
 * The request paths and credentials of the routes the comparisons of builds drive: the 401 of a
 * malformed key, an encounter detail (the first of the list), the list's first page, that page
 * within `npm run bench`'s window (the first encounter to the middle of the data set's span) and
 * the audio link of the first ambient transcript on the page whose link answers 200 (absent when
 * none does).
 */
export async function comparedRoutes(base: string, token: string): Promise<Record<string, [string, string]>> {
  const get = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const page = (await (await get(LIST)).json()) as { items: ListedEncounter[] };
  const routes: Record<string, [string, string]> = {
    '401': [LIST, MALFORMED_TOKEN],
    unknown: [LIST, generateToken('live')],
    detail: [`/external/v1/encounters/${page.items[0]!.encounter_id}`, token],
    list: [LIST, token],
    window: [`${LIST}${await windowQuery(get)}`, token],
  };
  const audio = await firstAudioLink(get, page.items);
  if (audio !== undefined) routes.audio = [audio, token];
  return routes;
}

/** `npm run bench`'s window: from the first encounter to the middle of the data set's span. */
export async function windowQuery(get: (path: string) => Promise<Response>): Promise<string> {
  const created = async (order: string) =>
    ((await (await get(`${LIST}&sort_order=${order}`)).json()) as { items: { created_at: string }[] })
      .items[0]!.created_at;
  const first = await created('asc');
  const last = await created('desc');
  const middle = new Date((Date.parse(first) + Date.parse(last)) / 2);
  return `&start_at=${encodeURIComponent(first)}&end_at=${encodeURIComponent(middle.toISOString())}`;
}

async function firstAudioLink(
  get: (path: string) => Promise<Response>,
  encounters: readonly ListedEncounter[],
): Promise<string | undefined> {
  for (const encounter of encounters) {
    for (const document of encounter.documents) {
      if (document.schema_type !== 'ambient_transcript') continue;
      const path = `/external/v1/encounters/${encounter.encounter_id}/documents/${document.document_id}/audio`;
      const answer = await get(path);
      await answer.body?.cancel();
      if (answer.ok) return path;
    }
  }
  return undefined;
}

/** A route's answer as the ceiling and the framework floor serve it back. */
export interface RecordedAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** Each target's answer from the service at `base`, under the path the recorded servers use. */
export async function recordAnswers(
  base: string,
  targets: Record<string, [string, string]>,
  recordedPath: (name: string) => string,
): Promise<Record<string, RecordedAnswer>> {
  const recorded: Record<string, RecordedAnswer> = {};
  for (const [name, [path, token]] of Object.entries(targets)) {
    const answer = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    recorded[recordedPath(name)] = {
      status: answer.status,
      contentType: answer.headers.get('content-type') ?? '',
      body: await answer.text(),
    };
  }
  return recorded;
}
