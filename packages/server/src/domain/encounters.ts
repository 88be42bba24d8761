/** The encounter routes' rules: listing within the caller's organization, and encounter access. */
import type { Caller } from '../auth/verifyApiKey.js';
import type { Db } from '../database/connection.js';
import { classifyEncounter, type EncounterAccess } from '../database/encounterAccess.js';
import { isStorableId } from '../database/storableId.js';
import { listEntityTag } from '../readModel/entityTags.js';
import { countEncounters } from '../readModel/read/counts.js';
import { encounterRead } from '../readModel/read/keys.js';
import { type ListPage, listEncounterPage } from '../readModel/read/pages.js';
import { ApiError } from './errors.js';
import { listBody } from './listBody.js';
import { StoredAnswer } from './storedAnswer.js';

/**
 * A page of the caller's encounters: the stored summaries joined into the contract's list body
 * (the same bytes the schema serializer wrote from objects), without parsing or building any.
 */
export async function listEncounters(
  db: Db,
  caller: Caller,
  page: ListPage,
): Promise<{ answer: StoredAnswer; total: number }> {
  const [rows, total] = await Promise.all([
    listEncounterPage(db, caller.organizationId, page),
    countEncounters(db, caller.organizationId, page.window),
  ]);
  const tail = `],"limit":${page.limit},"offset":${page.offset},"total":${total}}`;
  const tags: string[] = [];
  // Repeats included: the audit names the set by its distinct members (patientSets.ts).
  const patients: string[] = [];
  for (const row of rows) {
    tags.push(row.etag);
    patients.push(row.patient_id);
  }
  const body = listBody(rows, tail);
  const answer = new StoredAnswer(body, listEntityTag(tags, page.limit, page.offset, total), patients);
  // The total also goes into the list's Link header.
  return { answer, total };
}

/**
 * An encounter, if the caller may see it: 404 when it exists nowhere, 403 when it belongs to
 * another organization or is a demo/training encounter (decisions.md, API keys).
 */
export function granted<T>(access: EncounterAccess<T>): T {
  switch (access.status) {
    case 'found':
      return access.encounter;
    case 'absent':
      throw new ApiError('encounter_not_found', 'No encounter with this ID exists for your organization.');
    case 'other_organization':
      throw new ApiError(
        'cross_organization_denied',
        'This encounter is not available to your organization.',
      );
    case 'demo_training':
      throw new ApiError(
        'demo_training_denied',
        'Demo and training encounters are not available through the API.',
      );
  }
}

export async function getEncounter(db: Db, caller: Caller, encounterId: string): Promise<StoredAnswer> {
  const [row] = isStorableId(encounterId) ? await encounterRead(db, encounterId, caller.organizationId) : [];
  const found = granted(row ? classifyEncounter(row, row) : { status: 'absent' });
  // Found: the caller's listable encounter, whose stored answer the query joined.
  return new StoredAnswer(`{"encounter":${found.summary}}`, found.etag as string, [
    found.patient_id as string,
  ]);
}
