/**
 * Patient sets (migration 009): an audited answer names the set of patients it carried, and a
 * set is stored once, however many answers carry it. A set is named by a digest of its sorted,
 * distinct members, so every process, and every later answer, names the same set the same way
 * without asking the database.
 */
import { createHash } from 'node:crypto';

/**
 * 128 bits of SHA-256 over the members as a JSON array (unambiguous whatever the IDs hold),
 * base64url: 22 characters. Equal sets get equal names; a collision, which would put one set's
 * patients under another's records, is as likely as guessing a random 128-bit key.
 */
export function patientSetId(sortedDistinctIds: readonly string[]): string {
  return setIdOfMembersJson(JSON.stringify(sortedDistinctIds));
}

function setIdOfMembersJson(json: string): string {
  return createHash('sha256').update(json).digest('base64url').slice(0, 22);
}

/**
 * How stale a set's `last_used_at` may be: a record naming a stored set moves it only when it is
 * older than this, so a set named again and again (a page polled by sync jobs) is rewritten at
 * most once an hour. Each rewrite is a new row version, and on PostgreSQL that re-adds the set's
 * members to the GIN index (the last-use index rules out a HOT update): at one second, a page
 * polled every few minutes cost about as much as a page never seen. Retention allows for it: a
 * prune before T deletes the sets last used before T minus this, whose records are all older
 * than T; an hour is nothing against retention periods of months.
 */
export const SET_LAST_USED_STEP_MS = 60 * 60 * 1000;

export interface PatientSet {
  members: readonly string[];
  /** The members as stored: the JSON array the set's name is the digest of. */
  membersJson: string;
  /** The newest record of the group naming the set. */
  lastUsedAt: number;
}

/**
 * Names each record's set and collects the group's distinct sets, in the order of their names:
 * concurrent writers (PostgreSQL, several processes) then lock the sets they share in the same
 * order and cannot deadlock on them.
 */
export function patientSetsOf<Record extends { at: number; patient_ids?: readonly string[] | undefined }>(
  records: readonly Record[],
): { setIds: (string | null)[]; sets: [string, PatientSet][] } {
  const sets = new Map<string, PatientSet>();
  const setIds = records.map((record) => {
    const ids = record.patient_ids;
    if (ids === undefined || ids.length === 0) return null;
    const members = [...new Set(ids)].sort();
    const membersJson = JSON.stringify(members);
    const id = setIdOfMembersJson(membersJson);
    const seen = sets.get(id);
    if (seen === undefined) sets.set(id, { members, membersJson, lastUsedAt: record.at });
    else if (seen.lastUsedAt < record.at) seen.lastUsedAt = record.at;
    return id;
  });
  return { setIds, sets: [...sets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
}
