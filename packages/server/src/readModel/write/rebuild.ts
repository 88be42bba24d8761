/**
 * The read model's build step, which `eds migrate` runs after the migrations (src/upgradeStore.ts):
 * stored answers for clinical data that has none, stored before the read model existed or left
 * behind by a build cut short.
 */
import { sql } from 'kysely';
import { type Db, inTransaction } from '../../database/connection.js';
import { ANSWER_PAGE, writeDocumentReads, writeEncounterReads } from './storedAnswers.js';

/**
 * Whether some encounter or document has no stored answer row: the read model was never built for
 * data stored before it existed, or a build was cut short. Every write of clinical data writes
 * both in one transaction, so the counts agree whenever the read model is whole. One statement,
 * so both counts come from one snapshot.
 */
export async function readModelIncomplete(db: Db): Promise<boolean> {
  const { rows } = await sql<{ encounters: number; documents: number }>`select
      (select count(*) from encounters) - (select count(*) from encounter_reads) as encounters,
      (select count(*) from documents) - (select count(*) from document_reads) as documents`.execute(db);
  const [gaps] = rows;
  return Number(gaps?.encounters) !== 0 || Number(gaps?.documents) !== 0;
}

/** The next `limit` encounter IDs after `afterId` (keyset), for rebuilding everything. */
async function encounterIdsAfter(
  db: Db,
  afterId: string,
  limit: number,
  organizationId?: string,
): Promise<string[]> {
  let query = db.selectFrom('encounters').select('id').where('id', '>', afterId);
  if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((r) => r.id);
}

async function documentIdsAfter(
  db: Db,
  afterId: string,
  limit: number,
  organizationId?: string,
): Promise<string[]> {
  let query = db.selectFrom('documents').select('id').where('id', '>', afterId);
  if (organizationId !== undefined) query = query.where('organization_id', '=', organizationId);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map((r) => r.id);
}

/**
 * Builds the stored answers of every document and encounter (of one organization, or all):
 * `eds migrate` for data stored before the read model existed, and bulk loaders that write rows
 * without it. A page of IDs per transaction; repeating it rewrites the same bytes.
 */
export async function rebuildReadModel(db: Db, organizationId?: string): Promise<void> {
  for (let after = ''; ; ) {
    const ids = await documentIdsAfter(db, after, ANSWER_PAGE, organizationId);
    if (ids.length === 0) break;
    await inTransaction(db, (tx) => writeDocumentReads(tx, ids));
    after = ids.at(-1)!;
  }
  for (let after = ''; ; ) {
    const ids = await encounterIdsAfter(db, after, ANSWER_PAGE, organizationId);
    if (ids.length === 0) break;
    await inTransaction(db, (tx) => writeEncounterReads(tx, ids));
    after = ids.at(-1)!;
  }
}
