/**
 * `eds import FILE`: validate the whole file, copy its audio, then write everything in one
 * transaction. Any problem refuses the import with every bad line listed and nothing written.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { BULK_LOAD_ROWS, refreshPlannerStatistics } from '../database/plannerStatistics.js';
import { OperatorError } from '../domain/errors.js';
import type { Services } from '../services.js';
import { copyAudio } from './copyAudio.js';
import { ImportRejectedError } from './problems.js';
import type { RecordKind } from './records.js';
import { validateImport } from './validateImport.js';
import { writeImport } from './writeImport.js';

export interface ImportSummary {
  imported: Record<RecordKind, number> & { transcript_ready_events: number };
}

export async function importNdjsonFile(services: Services, given: string): Promise<ImportSummary> {
  const file = resolve(given);
  const before = await stat(file).catch(() => undefined);
  if (!before?.isFile()) throw new OperatorError(`${given} is not a readable file`);
  const baseDir = await realpath(dirname(file));

  const validation = await validateImport(services.store.db, file, baseDir);
  if (!validation.ok) {
    throw new ImportRejectedError(given, validation.problems.first(), validation.problems.count);
  }
  const { plan } = validation;
  const audio = await copyAudio(services.media, plan.audio);
  const now = services.clock();
  const events = await services.store.db.transaction().execute(async (tx) => {
    const count = await writeImport(tx, file, plan, audio, now, services.config);
    const after = await stat(file);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) {
      throw new OperatorError('the file changed while it was being imported; nothing was written');
    }
    return count;
  });
  const rows = Object.values(plan.counts).reduce((a, b) => a + b, 0);
  if (rows >= BULK_LOAD_ROWS) await refreshPlannerStatistics(services.store, services.logger);
  return { imported: { ...plan.counts, transcript_ready_events: events } };
}
