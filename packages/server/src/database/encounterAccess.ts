/**
 * Whether the caller may see an encounter, decided from flags the query computes with the
 * caller's organization: another organization's encounter is read for those flags only, never for
 * its patient or its documents (those are joined under the caller's organization). Both the
 * store's audio read (store/documents.ts) and the read model's key reads (readModel/read/keys.ts)
 * classify this way, so it sits below both.
 */
import { type RawBuilder, sql } from 'kysely';
import type { Db } from './connection.js';
import type { EncounterRow } from './schema.js';
import { unplannedText } from './unplannedValue.js';

/** What an encounter ID is to the caller. Only `found` carries data. */
export type EncounterAccess<T = EncounterRow> =
  | { status: 'found'; encounter: T }
  | { status: 'absent' }
  | { status: 'other_organization' }
  | { status: 'demo_training' };

/**
 * What the 403/404 classification may read of any organization's encounter: whether it is the
 * caller's (computed in the query from the caller's organization) and its demo flag. Nothing
 * else of another organization's encounter is ever selected.
 */
export interface AccessFlags {
  /** 1 when the encounter belongs to the caller's organization, else 0. */
  own: number;
  demo_training: number;
}

/**
 * The access class of an encounter for the caller, from its flags (the contract's order: another
 * organization's first, then demo/training); `data` is carried when it is found.
 */
export function classifyEncounter<T>(flags: AccessFlags, data: T): EncounterAccess<T> {
  if (flags.own !== 1) return { status: 'other_organization' };
  if (flags.demo_training === 1) return { status: 'demo_training' };
  return { status: 'found', encounter: data };
}

/**
 * The `own` flag of AccessFlags: 1 when `column` (an organization ID) is the caller's. The ID goes
 * through unplannedText like every value of a prepared read, which SQLite would refuse otherwise.
 */
export function ownFlag(db: Db, column: string, organizationId: string): RawBuilder<number> {
  return sql<number>`case when ${sql.ref(column)} = ${unplannedText(db, organizationId)} then 1 else 0 end`;
}
