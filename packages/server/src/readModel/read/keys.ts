/**
 * Reads of one stored answer by key: an encounter's summary, a document's detail, a transcript.
 * Each is one statement that classifies the encounter for the caller and joins the answer only
 * when the caller may see it.
 */
import { sql } from 'kysely';
import type { Db } from '../../database/connection.js';
import { ownFlag } from '../../database/encounterAccess.js';
import { preparedQuery } from '../../database/preparedQuery.js';
import { unplannedText } from '../../database/unplannedValue.js';

/**
 * Any organization's encounter `e`, read for its access flags only, and `c`, the same encounter's
 * stored answer joined only when it is the caller's and listable: everything a route answers with
 * comes from `c` (or is joined through it), so another organization's answer is never read. On
 * SQLite `c` is found by its whole primary key (organization, demo flag, created_at, ID).
 */
function callerEncounterRead(db: Db, encounterId: string, organizationId: string) {
  return db
    .selectFrom('encounter_reads as e')
    .leftJoin('encounter_reads as c', (join) =>
      join
        .on('c.organization_id', '=', unplannedText(db, organizationId))
        .on('c.demo_training', '=', sql.lit(0))
        .onRef('c.created_at', '=', 'e.created_at')
        .onRef('c.encounter_id', '=', 'e.encounter_id'),
    )
    .select([ownFlag(db, 'e.organization_id', organizationId).as('own'), 'e.demo_training as demo_training'])
    .where('e.encounter_id', '=', unplannedText(db, encounterId));
}

/** The encounter detail's statement (exported so a test can read its SQL). */
export function encounterReadQuery(db: Db, encounterId: string, organizationId: string) {
  return callerEncounterRead(db, encounterId, organizationId).select([
    'c.patient_id as patient_id',
    'c.summary as summary',
    'c.etag as etag',
  ]);
}

export const encounterRead = preparedQuery(encounterReadQuery, { turnBatched: true });

/** The encounter's access flags and, when it is the caller's, the document asked for under it. */
function documentReadJoin(db: Db, encounterId: string, documentId: string, organizationId: string) {
  return callerEncounterRead(db, encounterId, organizationId)
    .leftJoin('document_reads as d', (join) =>
      join
        .on('d.document_id', '=', unplannedText(db, documentId))
        .onRef('d.encounter_id', '=', 'c.encounter_id')
        .on('d.organization_id', '=', unplannedText(db, organizationId)),
    )
    .select(['c.patient_id as patient_id', 'd.document_id as document_id', 'd.schema_type as schema_type']);
}

/** The document detail's statement (exported so a test can read its SQL). */
export function documentDetailQuery(db: Db, encounterId: string, documentId: string, organizationId: string) {
  return documentReadJoin(db, encounterId, documentId, organizationId).select([
    'd.detail as body',
    'd.detail_etag as etag',
  ]);
}

export const documentDetailRead = preparedQuery(documentDetailQuery, { turnBatched: true });

export const transcriptRead = preparedQuery(
  (db, encounterId: string, documentId: string, organizationId: string) =>
    documentReadJoin(db, encounterId, documentId, organizationId).select([
      'd.transcript as body',
      'd.transcript_etag as etag',
    ]),
  { turnBatched: true },
);
