/**
 * Writes of clinical data (imports and the demo). Every function runs inside the caller's
 * transaction, writes in multi-row batches, and replaces rows by id (imports are idempotent).
 * Encounter writes keep the per-day and per-hour count roll-ups (the days' running totals too) and
 * each organization's total exact in the same transaction.
 */
import { type Insertable, type Kysely, sql } from 'kysely';
import { COUNT_ROLLUPS, type CountRollup } from '../database/countRollups.js';
import type {
  Database,
  DocumentsTable,
  EncountersTable,
  PatientsTable,
  RecordingsTable,
  TranscriptsTable,
} from '../database/schema.js';
import { chunks } from '../database/statementBatches.js';
import { dayOf, hourOf } from '../time.js';

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

interface CountDelta {
  organization_id: string;
  /** The day or hour. */
  at: number;
  count: number;
}

/** Changes to organizations' per-day or per-hour counts, summed by organization and day or hour. */
class CountDeltas {
  readonly #byKey = new Map<string, CountDelta>();

  add(organizationId: string, at: number, by: number): void {
    const key = `${organizationId}\u0000${at}`;
    const entry = this.#byKey.get(key) ?? { organization_id: organizationId, at, count: 0 };
    entry.count += by;
    this.#byKey.set(key, entry);
  }

  changed(): CountDelta[] {
    return [...this.#byKey.values()].filter((d) => d.count !== 0);
  }
}

export async function upsertEncounters(tx: Tx, rows: Insertable<EncountersTable>[]): Promise<void> {
  // Each organization's first day whose count changed: its running totals from there on are
  // restated once, after all the batches.
  const firstChangedDay = new Map<string, number>();
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
    const days = new CountDeltas();
    const hours = new CountDeltas();
    const bump = (organizationId: string, createdAt: number, by: number) => {
      days.add(organizationId, dayOf(createdAt), by);
      hours.add(organizationId, hourOf(createdAt), by);
    };
    for (const old of existing) if (old.demo_training === 0) bump(old.organization_id, old.created_at, -1);
    for (const row of batch) if (!row.demo_training) bump(row.organization_id, row.created_at, 1);
    // Written below in any order: no other transaction holds these organizations' days and hours
    // while this one holds their totals.

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
    // An encounter moved to another hour of its day changes its hours and not its day.
    await addToRollup(tx, 'day', days.changed());
    await addToRollup(tx, 'hour', hours.changed());
    await addToOrganizationCounts(tx, days.changed());
    for (const { organization_id, at } of days.changed())
      firstChangedDay.set(organization_id, Math.min(at, firstChangedDay.get(organization_id) ?? at));
  }
  for (const [organizationId, day] of firstChangedDay) await restateEarlierCounts(tx, organizationId, day);
}

/**
 * Sets each day's `earlier` (the organization's listable encounters on its earlier days) from the
 * day counts, on the days from `fromDay` on (all of them without it): a changed count moves the
 * running total of every later day. Reads all the organization's days, a few hundred rows a year.
 */
async function restateEarlierCounts(tx: Tx, organizationId: string, fromDay?: number): Promise<void> {
  const from = fromDay === undefined ? sql`` : sql`and encounter_day_counts.day >= ${fromDay}`;
  await sql`update encounter_day_counts set earlier = running.earlier
    from (
      select day, sum(count) over (order by day) - count as earlier
      from encounter_day_counts where organization_id = ${organizationId}
    ) as running
    where encounter_day_counts.organization_id = ${organizationId}
      and encounter_day_counts.day = running.day ${from}
      and encounter_day_counts.earlier <> running.earlier`.execute(tx);
}

/** Adds count changes to a roll-up, creating the days or hours it has no row for yet. */
async function addToRollup(tx: Tx, rollup: CountRollup, changes: readonly CountDelta[]): Promise<void> {
  if (changes.length === 0) return;
  const table = sql.table(COUNT_ROLLUPS[rollup].table);
  const unit = sql.ref(rollup);
  const rows = sql.join(changes.map((c) => sql`(${c.organization_id}, ${c.at}, ${c.count})`));
  await sql`insert into ${table} (organization_id, ${unit}, count) values ${rows}
    on conflict (organization_id, ${unit}) do update set count = ${table}.count + excluded.count`.execute(tx);
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
 * Recomputes an organization's per-day and per-hour counts and its total from its encounters. For bulk
 * loaders that write encounters without the incremental bookkeeping of `upsertEncounters` (the
 * demo's SQLite path).
 */
export async function rebuildEncounterCounts(tx: Tx, organizationId: string): Promise<void> {
  await lockOrganizationTotals(tx, [organizationId]);
  await rebuildRollup(tx, 'day', organizationId);
  await restateEarlierCounts(tx, organizationId);
  await rebuildRollup(tx, 'hour', organizationId);
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

async function rebuildRollup(tx: Tx, rollup: CountRollup, organizationId: string): Promise<void> {
  const { table: name, unitMs } = COUNT_ROLLUPS[rollup];
  const table = sql.table(name);
  // floor(created_at / unit) as dayOf() and hourOf() compute it, as a literal so both dialects group by it.
  const unit = sql`floor(created_at / ${sql.raw(`${unitMs}.0`)})`;
  await sql`delete from ${table} where organization_id = ${organizationId}`.execute(tx);
  await sql`insert into ${table} (organization_id, ${sql.ref(rollup)}, count)
    select organization_id, ${unit}, count(*) from encounters
    where organization_id = ${organizationId} and demo_training = 0
    group by organization_id, ${unit}`.execute(tx);
}
