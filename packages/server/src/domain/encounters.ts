/** The encounter routes' rules: listing within the caller's organization, and encounter access. */
import type { Caller } from '../auth/verifyApiKey.js';
import type { EncounterBody, EncounterListBody } from '../contract/schemas.js';
import type { Db } from '../store/database.js';
import {
  countEncounters,
  type EncounterAccess,
  findEncounterViewAccess,
  type ListPage,
  listEncounterPage,
} from '../store/encounters.js';
import { ApiError } from './errors.js';
import { toEncounterBody } from './views.js';

export async function listEncounters(db: Db, caller: Caller, page: ListPage): Promise<EncounterListBody> {
  const [views, total] = await Promise.all([
    listEncounterPage(db, caller.organizationId, page),
    countEncounters(db, caller.organizationId, page.window),
  ]);
  return { items: views.map(toEncounterBody), limit: page.limit, offset: page.offset, total };
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

export async function getEncounter(db: Db, caller: Caller, encounterId: string): Promise<EncounterBody> {
  return toEncounterBody(granted(await findEncounterViewAccess(db, caller.organizationId, encounterId)));
}
