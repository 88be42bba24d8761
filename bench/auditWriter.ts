/**
 * How many audit records per second the writer commits when answers wait for it: `concurrency`
 * callers each commit one record, wait for it, and commit the next, as requests do under load.
 * Measured for detail answers (one disclosed patient) and list pages (50 patients a record):
 * the same page again and again (a sync job polling its first page: a patient set stored once
 * and named by each record), and a new page every time (50 patients never disclosed before: the
 * set and its 50 member rows written with each record, the most an answer can cost the writer).
 */
import pino from 'pino';
import { type AuditWriter, KyselyAuditWriter } from '../packages/server/src/audit/auditWriter.js';
import { GroupCommit } from '../packages/server/src/audit/groupCommit.js';
import { SqliteThreadWriter } from '../packages/server/src/audit/sqliteThreadWriter.js';
import { openStore } from '../packages/server/src/database/connection.js';

export interface WriterThroughput {
  shape: string;
  records_per_s: number;
  disclosure_rows_per_s: number;
  mean_group: number;
}

function writerFor(databaseUrl: string): AuditWriter {
  const logger = pino({ level: 'silent' });
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const own = openStore({ dialect: 'postgres', url: databaseUrl, poolSize: 1, statementTimeoutMs: 5000 });
    return new KyselyAuditWriter(own, () => own.close());
  }
  const synchronous = process.env.EDS_AUDIT_SQLITE_SYNCHRONOUS === 'normal' ? 'normal' : 'full';
  return new SqliteThreadWriter(databaseUrl, 5000, logger, synchronous);
}

export async function measureAuditWriter(
  databaseUrl: string,
  concurrency: number,
  seconds: number,
): Promise<WriterThroughput[]> {
  const results: WriterThroughput[] = [];
  for (const [shape, patients, fresh] of [
    ['detail (1 patient)', 1, false],
    ['list page (50 patients), the same page', 50, false],
    ['list page (50 patients), a new page each time', 50, true],
  ] as const) {
    const writer = writerFor(databaseUrl);
    await writer.start?.();
    let groups = 0;
    const counting: AuditWriter = {
      write: (records) => {
        groups++;
        return writer.write(records);
      },
      close: () => writer.close(),
    };
    const commit = new GroupCommit({
      writer: counting,
      maxRecords: 2000,
      timeoutMs: 10_000,
      logger: pino({ level: 'silent' }),
    });
    const samePatients = Array.from({ length: patients }, (_, i) => `pat_bench_${i}`);
    let pages = 0;
    const patientIdsOf = () => {
      if (!fresh) return samePatients;
      const page = `${Date.now().toString(36)}_${pages++}`;
      return samePatients.map((id) => `${id}_${page}`);
    };
    let committed = 0;
    const until = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, c) => {
        for (let i = 0; Date.now() < until; i++) {
          await commit.commit({
            at: Date.now(),
            request_id: `req_bench_${c}_${i}_${shape.length}`,
            organization_id: 'org_bench',
            key_id: 'key_bench',
            method: 'GET',
            route: patients === 1 ? 'getEncounter' : 'listEncounters',
            encounter_id: null,
            document_id: null,
            status: 200,
            reason_code: null,
            duration_ms: 1,
            patient_ids: patientIdsOf(),
          });
          committed++;
        }
      }),
    );
    await commit.close();
    await writer.close();
    results.push({
      shape,
      records_per_s: Math.round(committed / seconds),
      disclosure_rows_per_s: Math.round((committed * patients) / seconds),
      mean_group: Math.round(committed / Math.max(groups, 1)),
    });
  }
  return results;
}
