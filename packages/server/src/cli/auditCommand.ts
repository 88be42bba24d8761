/** `eds audit`: the API audit log as NDJSON, oldest first, streamed (the log can be large). */
import type { Command } from 'commander';
import { readAudit } from '../store/audit.js';
import { toIso } from '../time.js';
import { parseInstant } from './optionParsers.js';
import { writeLine } from './output.js';
import type { runCommand } from './runCommand.js';

export function registerAuditCommand(program: Command, run: typeof runCommand): void {
  program
    .command('audit')
    .description('print audit records as NDJSON (one JSON object a line)')
    .option('--org <id>', 'only this organization')
    .option('--since <iso>', 'from this time, inclusive', parseInstant)
    .option('--until <iso>', 'up to this time, exclusive', parseInstant)
    .action((opts: { org?: string; since?: number; until?: number }) =>
      run(async ({ services }) => {
        const rows = readAudit(services.store.db, {
          organizationId: opts.org,
          sinceMs: opts.since,
          untilMs: opts.until,
        });
        for await (const row of rows) {
          await writeLine(
            JSON.stringify({
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
            }),
          );
        }
        return undefined;
      }),
    );
}
