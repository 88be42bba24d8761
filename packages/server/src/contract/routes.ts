/**
 * The contract's endpoint table. Authentication, route enablement, scope checks, query
 * validation, the OpenAPI document and the shared route tests all read this one table.
 */
import type { TObject } from 'typebox';
import { ListEncountersQuery, NoQuery } from './listQuery.js';

export type Scope = 'encounters:read' | 'patients:read' | 'documents:read' | 'recordings:read';
export const SCOPES: readonly Scope[] = [
  'encounters:read',
  'patients:read',
  'documents:read',
  'recordings:read',
];

/** Route groups an organization can be enabled for (decisions.md). */
export type RouteGroup = 'encounters' | 'documents';
export const ROUTE_GROUPS: readonly RouteGroup[] = ['encounters', 'documents'];

export type RouteId = 'listEncounters' | 'getEncounter' | 'getDocument' | 'getTranscript' | 'getAudio';

export interface RouteDefinition {
  readonly id: RouteId;
  /** The contract's row number (1 to 5). */
  readonly number: number;
  readonly method: 'GET';
  /** Fastify path template. */
  readonly path: string;
  readonly group: RouteGroup;
  readonly scopes: readonly Scope[];
  /** The query parameters the route accepts; any other key is `unsupported_filter`. */
  readonly query: TObject;
  readonly summary: string;
}

const ENCOUNTER = '/external/v1/encounters/:encounter_id';
const DOCUMENT = `${ENCOUNTER}/documents/:document_id`;

export const ROUTES: Readonly<Record<RouteId, RouteDefinition>> = {
  listEncounters: {
    id: 'listEncounters',
    number: 1,
    method: 'GET',
    path: '/external/v1/encounters',
    group: 'encounters',
    scopes: ['encounters:read', 'patients:read', 'documents:read'],
    query: ListEncountersQuery,
    summary: 'List encounters',
  },
  getEncounter: {
    id: 'getEncounter',
    number: 2,
    method: 'GET',
    path: ENCOUNTER,
    group: 'encounters',
    scopes: ['encounters:read', 'patients:read', 'documents:read'],
    query: NoQuery,
    summary: 'Get an encounter',
  },
  getDocument: {
    id: 'getDocument',
    number: 3,
    method: 'GET',
    path: DOCUMENT,
    group: 'documents',
    scopes: ['encounters:read', 'documents:read'],
    query: NoQuery,
    summary: 'Get a document',
  },
  getTranscript: {
    id: 'getTranscript',
    number: 4,
    method: 'GET',
    path: `${DOCUMENT}/transcript`,
    group: 'documents',
    scopes: ['encounters:read', 'documents:read'],
    query: NoQuery,
    summary: 'Get the finalized transcript of an ambient transcript document',
  },
  getAudio: {
    id: 'getAudio',
    number: 5,
    method: 'GET',
    path: `${DOCUMENT}/audio`,
    group: 'documents',
    scopes: ['encounters:read', 'documents:read', 'recordings:read'],
    query: NoQuery,
    summary: 'Get a short-lived link to the recording of an ambient transcript document',
  },
};

export const ROUTE_LIST: readonly RouteDefinition[] = Object.values(ROUTES);

/**
 * Follow-up routes a webhook activation can approve (the contract's follow-up table), by the
 * short names the `eds webhook activate --routes` flag takes.
 */
export const FOLLOW_UP_ROUTES = {
  encounter: ROUTES.getEncounter,
  document: ROUTES.getDocument,
  transcript: ROUTES.getTranscript,
  audio: ROUTES.getAudio,
} as const;
export type FollowUpRoute = keyof typeof FOLLOW_UP_ROUTES;

/** Least privilege: exactly the union of the approved follow-up routes' scopes. */
export function scopesForFollowUpRoutes(approved: readonly FollowUpRoute[]): Scope[] {
  const wanted = new Set<Scope>();
  for (const name of approved) for (const scope of FOLLOW_UP_ROUTES[name].scopes) wanted.add(scope);
  return SCOPES.filter((s) => wanted.has(s));
}
