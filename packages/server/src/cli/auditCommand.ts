/**
 * `eds audit`: the API audit log as NDJSON, oldest first, streamed (the log can be large);
 * `eds audit --patient ID`: every audited answer that carried that patient's data, newest first;
 * `eds audit prune --before ISO`: retention, deleting older rows in bounded batches.
 */
import type { Command } from 'commander';
import type { Db } from '../database/connection.js';
import { pruneAudit, readAudit, readDisclosures } from '../store/audit.js';
import { toIso } from '../time.js';
import { parseInstant } from './optionParsers.js';
import { writeLine } from './output.js';
import type { runCommand } from './runCommand.js';

interface AuditOptions {
  org?: string;
  patient?: string;
  since?: number;
  until?: number;
}

export function registerAuditCommand(program: Command, run: typeof runCommand): void {
  const audit = program
    .command('audit')
    .description('print audit records as NDJSON (one JSON object a line)')
    .option('--org <id>', 'only this organization')
    .option('--patient <id>', "only answers that carried this patient's data, newest first")
    .option('--since <iso>', 'from this time, inclusive', parseInstant)
    .option('--until <iso>', 'up to this time, exclusive', parseInstant)
    .action((opts: AuditOptions) =>
      run(async ({ services }) => {
        if (opts.patient !== undefined) {
          await printDisclosures(services.store.db, { ...opts, patient: opts.patient });
        } else await printAudit(services.store.db, opts);
        return undefined;
      }),
    );
  audit
    .command('prune')
    .description('delete audit records older than --before, in bounded batches (never done by default)')
    .requiredOption('--before <iso>', 'delete records from before this time', parseInstant)
    .action((opts: { before: number }) =>
      run(async ({ services }) => {
        const deleted = await pruneAudit(services.store.db, opts.before);
        return { before: toIso(opts.before), deleted };
      }),
    );
}

/** Streams rows as NDJSON, one line each, at the pace stdout takes them. */
async function printEach<Row>(rows: AsyncIterable<Row>, line: (row: Row) => object): Promise<void> {
  for await (const row of rows) await writeLine(JSON.stringify(line(row)));
}

function printAudit(db: Db, opts: AuditOptions): Promise<void> {
  const rows = readAudit(db, { organizationId: opts.org, sinceMs: opts.since, untilMs: opts.until });
  return printEach(rows, (row) => ({
    at: toIso(row.at),
    request_id: row.request_id,
    organization_id: row.organization_id,
    key_id: row.key_id,
    method: row.method,
    route: row.route,
    encounter_id: row.encounter_id,
    document_id: row.document_id,
    status: row.status,
    reason_code: row.reason_code,
    duration_ms: row.duration_ms,
    request_count: row.request_count,
  }));
}

function printDisclosures(db: Db, opts: AuditOptions & { patient: string }): Promise<void> {
  const rows = readDisclosures(db, {
    patientId: opts.patient,
    organizationId: opts.org,
    sinceMs: opts.since,
    untilMs: opts.until,
  });
  return printEach(rows, (row) => ({
    at: toIso(row.at),
    request_id: row.request_id,
    organization_id: row.organization_id,
    key_id: row.key_id,
    route: row.route,
  }));
}
