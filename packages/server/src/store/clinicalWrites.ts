/**
 * Writes of clinical data (imports and the demo). Every function runs inside the caller's
 * transaction, writes in multi-row batches, and replaces rows by id (imports are idempotent).
 * Encounter writes keep the per-day count roll-up and each organization's total exact in the same
 * transaction.
 */
import { type Insertable, type Kysely, sql } from 'kysely';
import type {
  Database,
  DocumentsTable,
  EncountersTable,
  PatientsTable,
  RecordingsTable,
  TranscriptsTable,
} from '../database/schema.js';
import { chunks } from '../database/statementBatches.js';
import { DAY_MS, dayOf } from '../time.js';

type Tx = Kysely<Database>;

export async function upsertPatients(tx: Tx, rows: Insertable<PatientsTable>[]): Promise<void> {
  for (const batch of chunks(rows)) {
    await tx
      .insertInto('patients')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          organization_id: eb.ref('excluded.organization_id'),
          first_name: eb.ref('excluded.first_name'),
          last_name: eb.ref('excluded.last_name'),
          date_of_birth: eb.ref('excluded.date_of_birth'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}

export async function upsertEncounters(tx: Tx, rows: Insertable<EncountersTable>[]): Promise<void> {
  for (const batch of chunks(rows)) {
    // Before the rows are read: another transaction writing these organizations' encounters has
    // committed by then (PostgreSQL reads each statement's snapshot), so its rows count as existing.
    await lockOrganizationTotals(tx, [...new Set(batch.map((r) => r.organization_id))].sort());
    const existing = await tx
      .selectFrom('encounters')
      .select(['id', 'organization_id', 'demo_training', 'created_at'])
      .where(
        'id',
        'in',
        batch.map((r) => r.id),
      )
      .execute();
    const deltas = new Map<string, { organization_id: string; day: number; count: number }>();
    const bump = (organizationId: string, createdAt: number, by: number) => {
      const day = dayOf(createdAt);
      const key = `${organizationId}\u0000${day}`;
      const entry = deltas.get(key) ?? { organization_id: organizationId, day, count: 0 };
      entry.count += by;
      deltas.set(key, entry);
    };
    for (const old of existing) if (old.demo_training === 0) bump(old.organization_id, old.created_at, -1);
    for (const row of batch) if (!row.demo_training) bump(row.organization_id, row.created_at, 1);
    // In any order: no other transaction holds these organizations' days while this one holds
    // their totals.
    const changed = [...deltas.values()].filter((d) => d.count !== 0);

    await tx
      .insertInto('encounters')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          organization_id: eb.ref('excluded.organization_id'),
          patient_id: eb.ref('excluded.patient_id'),
          encounter_type: eb.ref('excluded.encounter_type'),
          status: eb.ref('excluded.status'),
          date_of_service: eb.ref('excluded.date_of_service'),
          created_at: eb.ref('excluded.created_at'),
          updated_at: eb.ref('excluded.updated_at'),
          demo_training: eb.ref('excluded.demo_training'),
        })),
      )
      .execute();
    if (changed.length > 0) {
      await tx
        .insertInto('encounter_day_counts')
        .values(changed)
        .onConflict((oc) =>
          oc.columns(['organization_id', 'day']).doUpdateSet((eb) => ({
            count: eb('encounter_day_counts.count', '+', eb.ref('excluded.count')),
          })),
        )
        .execute();
      await addToOrganizationCounts(tx, changed);
    }
  }
}

/**
 * Takes each organization's total (encounter_counts), creating it at 0 where it has none yet:
 * on PostgreSQL a row lock held to the end of the transaction. Whatever writes encounters takes
 * it first, in ID order (callers pass distinct, sorted IDs), so two transactions that write one
 * organization's encounters take turns instead of each locking rows the other needs, and the
 * second counts from what the first committed.
 */
export async function lockOrganizationTotals(tx: Tx, organizationIds: readonly string[]): Promise<void> {
  if (organizationIds.length === 0) return;
  await tx
    .insertInto('encounter_counts')
    .values(organizationIds.map((organization_id) => ({ organization_id, count: 0 })))
    .onConflict((oc) =>
      oc.column('organization_id').doUpdateSet((eb) => ({ count: eb.ref('encounter_counts.count') })),
    )
    .execute();
}

/** Adds day-count changes to their organizations' totals (encounter_counts, migration 011). */
async function addToOrganizationCounts(
  tx: Tx,
  changed: readonly { organization_id: string; count: number }[],
): Promise<void> {
  const byOrganization = new Map<string, number>();
  for (const { organization_id, count } of changed) {
    byOrganization.set(organization_id, (byOrganization.get(organization_id) ?? 0) + count);
  }
  const rows = [...byOrganization]
    .filter(([, count]) => count !== 0)
    .map(([organization_id, count]) => ({ organization_id, count }));
  if (rows.length === 0) return;
  await tx
    .insertInto('encounter_counts')
    .values(rows)
    .onConflict((oc) =>
      oc.column('organization_id').doUpdateSet((eb) => ({
        count: eb('encounter_counts.count', '+', eb.ref('excluded.count')),
      })),
    )
    .execute();
}

export async function upsertDocuments(tx: Tx, rows: Insertable<DocumentsTable>[]): Promise<void> {
  for (const batch of chunks(rows)) {
    await tx
      .insertInto('documents')
      .values(batch)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          encounter_id: eb.ref('excluded.encounter_id'),
          organization_id: eb.ref('excluded.organization_id'),
          schema_type: eb.ref('excluded.schema_type'),
          title: eb.ref('excluded.title'),
          status: eb.ref('excluded.status'),
          workflow_variant: eb.ref('excluded.workflow_variant'),
          audio_duration_seconds: eb.ref('excluded.audio_duration_seconds'),
          content_format: eb.ref('excluded.content_format'),
          content_text: eb.ref('excluded.content_text'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}

/**
 * Writes transcripts and returns the ids of documents whose transcript became finalized with
 * this write (it was absent or not finalized before): each gets one transcript_ready event.
 */
export async function upsertTranscripts(tx: Tx, rows: Insertable<TranscriptsTable>[]): Promise<string[]> {
  const newlyFinalized: string[] = [];
  for (const batch of chunks(rows)) {
    const before = await tx
      .selectFrom('transcripts')
      .select(['document_id', 'finalized'])
      .where(
        'document_id',
        'in',
        batch.map((r) => r.document_id),
      )
      .execute();
    const wasFinal = new Set(before.filter((r) => r.finalized === 1).map((r) => r.document_id));
    for (const row of batch)
      if (row.finalized === 1 && !wasFinal.has(row.document_id)) newlyFinalized.push(row.document_id);
    await tx
      .insertInto('transcripts')
      .values(batch)
      .onConflict((oc) =>
        oc.column('document_id').doUpdateSet((eb) => ({
          finalized: eb.ref('excluded.finalized'),
          provider: eb.ref('excluded.provider'),
          audio_duration_seconds: eb.ref('excluded.audio_duration_seconds'),
          turns: eb.ref('excluded.turns'),
          finalized_at: eb.ref('excluded.finalized_at'),
        })),
      )
      .execute();
  }
  return newlyFinalized;
}

/** Removes transcripts of documents that a re-import gives none. */
export async function deleteTranscripts(tx: Tx, documentIds: string[]): Promise<void> {
  for (const batch of chunks(documentIds)) {
    await tx.deleteFrom('transcripts').where('document_id', 'in', batch).execute();
  }
}

export async function upsertRecordings(tx: Tx, rows: Insertable<RecordingsTable>[]): Promise<void> {
  for (const batch of chunks(rows)) {
    await tx
      .insertInto('recordings')
      .values(batch)
      .onConflict((oc) =>
        oc.column('document_id').doUpdateSet((eb) => ({
          object_key: eb.ref('excluded.object_key'),
          content_type: eb.ref('excluded.content_type'),
          byte_size: eb.ref('excluded.byte_size'),
        })),
      )
      .execute();
  }
}

/** Removes recordings of documents that a re-import gives no audio. */
export async function deleteRecordings(tx: Tx, documentIds: string[]): Promise<void> {
  for (const batch of chunks(documentIds)) {
    await tx.deleteFrom('recordings').where('document_id', 'in', batch).execute();
  }
}

/**
 * Recomputes an organization's per-day counts and its total from its encounters. For bulk
 * loaders that write encounters without the incremental bookkeeping of `upsertEncounters` (the
 * demo's SQLite path).
 */
export async function rebuildEncounterCounts(tx: Tx, organizationId: string): Promise<void> {
  await lockOrganizationTotals(tx, [organizationId]);
  // floor(created_at / DAY_MS) as dayOf() computes it, as a literal so both dialects group by it.
  const dayExpression = sql<number>`floor(created_at / ${sql.raw(`${DAY_MS}.0`)})`;
  await tx.deleteFrom('encounter_day_counts').where('organization_id', '=', organizationId).execute();
  await tx
    .insertInto('encounter_day_counts')
    .columns(['organization_id', 'day', 'count'])
    .expression((eb) =>
      eb
        .selectFrom('encounters')
        .select((s) => ['organization_id', dayExpression.as('day'), s.fn.countAll<number>().as('count')])
        .where('organization_id', '=', organizationId)
        .where('demo_training', '=', 0)
        .groupBy(['organization_id', dayExpression]),
    )
    .execute();
  await tx
    .updateTable('encounter_counts')
    .set((eb) => ({
      count: eb
        .selectFrom('encounter_day_counts')
        .select((s) => s.fn.coalesce(s.fn.sum<number>('count'), s.lit(0)).as('n'))
        .where('organization_id', '=', organizationId),
    }))
    .where('organization_id', '=', organizationId)
    .execute();
}
