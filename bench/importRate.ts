/**
 * `npm run bench:import`: import throughput, rows per second, of `eds import` on a fresh database,
 * for this code and optionally another checkout (`--before PATH`), alternating, so the two are
 * compared within one run. The file: N encounters, one patient per six, and per encounter a
 * markdown note and an ambient transcript with a finalized transcript (no audio).
 * Options: --store sqlite|postgres --encounters N --rounds R --before PATH [--before-node PATH]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { eds, ROOT, runCheckoutOn } from './processes.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    encounters: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '2' },
    before: { type: 'string' },
    'before-node': { type: 'string' },
  },
});
const N = Number(values.encounters);
const DIR = join(ROOT, 'bench', 'results', 'import-rate');
mkdirSync(DIR, { recursive: true });
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function writeFile(): { file: string; rows: number } {
  const lines: string[] = [];
  const org = 'org_import_rate';
  lines.push(
    JSON.stringify({
      kind: 'organization',
      id: org,
      name: 'Rate',
      allowlisted: true,
      routes: ['encounters', 'documents'],
    }),
  );
  const patients = Math.ceil(N / 6);
  for (let p = 0; p < patients; p++) {
    lines.push(
      JSON.stringify({
        kind: 'patient',
        id: `pat_${p}`,
        organization_id: org,
        first_name: 'Ana',
        last_name: `Silva ${p}`,
        date_of_birth: '1980-02-29',
      }),
    );
  }
  const t0 = Date.UTC(2025, 0, 1);
  for (let e = 0; e < N; e++) {
    const at = new Date(t0 + e * 137_000).toISOString();
    lines.push(
      JSON.stringify({
        kind: 'encounter',
        id: `enc_${e}`,
        organization_id: org,
        patient_id: `pat_${e % patients}`,
        encounter_type: 'ambient',
        status: 'completed',
        date_of_service: at,
        created_at: at,
        updated_at: at,
      }),
    );
  }
  for (let e = 0; e < N; e++) {
    const at = new Date(t0 + e * 137_000 + 60_000).toISOString();
    lines.push(
      JSON.stringify({
        kind: 'document',
        id: `doc_n_${e}`,
        encounter_id: `enc_${e}`,
        schema_type: 'document',
        title: 'SOAP note',
        status: null,
        workflow_variant: null,
        created_at: at,
        updated_at: at,
        content: { format: 'markdown', text: `## Subjective\nVisit ${e}: headache for three days.` },
      }),
      JSON.stringify({
        kind: 'document',
        id: `doc_a_${e}`,
        encounter_id: `enc_${e}`,
        schema_type: 'ambient_transcript',
        title: 'Visit recording',
        status: 'completed',
        workflow_variant: 'ambient',
        created_at: at,
        updated_at: at,
        audio_duration_seconds: 61.5,
        transcript: {
          finalized: true,
          provider: 'example-asr',
          audio_duration_seconds: 61.5,
          turns: [
            { speaker: 'clinician', start: 0, end: 2.5, text: 'Good morning.' },
            { speaker: 'patient', start: 2.7, end: 5.1, text: 'Morning, doctor.' },
          ],
        },
      }),
    );
  }
  const file = join(DIR, `import-${values.store}-${N}.ndjson`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, rows: lines.length };
}

async function freshDatabase(label: string): Promise<Record<string, string>> {
  const env = {
    EDS_KEY_DIGEST_SECRET: 'bench-digest-secret-0123456789abcdef',
    EDS_MEDIA_SIGNING_SECRET: 'bench-media-secret-0123456789abcdef',
    EDS_LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  if (values.store === 'sqlite') {
    const dir = join(DIR, `db-${label}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return { ...env, EDS_DATABASE_URL: join(dir, 'eds.sqlite'), EDS_DATA_DIR: dir };
  }
  const name = `eds_import_rate_${label}`;
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name}`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { ...env, EDS_DATABASE_URL: url.toString(), EDS_DATA_DIR: join(DIR, `data-${label}`) };
}

async function main() {
  const { file, rows } = writeFile();
  const sides: [string, string][] = [['now', ROOT]];
  if (values.before) sides.unshift(['before', resolve(values.before)]);
  if (values.before && values['before-node']) runCheckoutOn(values.before, values['before-node']);
  const results: Record<string, number[]> = {};
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [label, root] of sides) {
      const env = await freshDatabase(label);
      eds(['migrate'], env, root);
      const started = process.hrtime.bigint();
      eds(['import', file], env, root);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      results[label] ??= [];
      results[label].push(rows / seconds);
      console.error(
        `${label}: ${rows} rows in ${seconds.toFixed(1)} s = ${(rows / seconds).toFixed(0)} rows/s`,
      );
    }
  }
  console.log(
    `\n${values.store}, ${N.toLocaleString('en-US')} encounters (${rows.toLocaleString('en-US')} rows), ${values.rounds} rounds, alternating`,
  );
  for (const [label, rates] of Object.entries(results)) {
    console.log(`${label}: ${rates.map((r) => r.toFixed(0)).join(', ')} rows/s`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
