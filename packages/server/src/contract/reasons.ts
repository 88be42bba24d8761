/**
 * Every reason code the service can answer with: the contract's error table, plus the codes
 * decisions.md adds (`route_not_found`, `method_not_allowed`, `rate_limited`, `audit_unavailable`,
 * `service_unavailable`, and the media host's own). Nothing else may appear in a problem body, on
 * the API or on the media host; the OpenAPI document, /docs/problems, the SDK's union type and the
 * tests all read this table.
 */
import type { RouteId } from './routes.js';

type Applies = 'all' | 'none' | readonly RouteId[];

interface ReasonDefinition {
  readonly status: number;
  readonly title: string;
  /** Which of the five routes can answer with it ('none': only outside the routes). */
  readonly routes: Applies;
  /** Which server answers with it: the API, the media host (signed audio links), or both. */
  readonly hosts: 'api' | 'media' | 'both';
}

function reason(
  status: number,
  title: string,
  routes: Applies,
  hosts: ReasonDefinition['hosts'] = 'api',
): ReasonDefinition {
  return { status, title, routes, hosts };
}

const DOCS = ['getDocument', 'getTranscript', 'getAudio'] as const;
const RESOURCES = ['getEncounter', ...DOCS] as const;

export const REASONS = {
  unsupported_filter: reason(400, 'Unsupported query parameter', 'all'),
  unsupported_document_type: reason(400, 'Unsupported document type', DOCS),
  audio_not_available_for_document: reason(400, 'No audio for this document', ['getAudio']),

  missing_bearer: reason(401, 'Missing bearer credentials', 'all'),
  api_keys_disabled: reason(401, 'API keys are disabled', 'all'),
  test_prefix_not_allowed: reason(401, 'Test keys are not accepted here', 'all'),
  malformed_token: reason(401, 'Malformed API key', 'all'),
  invalid_key: reason(401, 'Invalid API key', 'all'),
  disabled_key: reason(401, 'API key is disabled', 'all'),
  revoked_key: reason(401, 'API key is revoked', 'all'),
  expired_key: reason(401, 'API key has expired', 'all'),

  org_scope_only_required: reason(403, 'Organization-scoped key required', 'all'),
  missing_scope: reason(403, 'Missing scope', 'all'),
  route_not_allowed: reason(403, 'Route not enabled for this organization', 'all'),
  organization_not_allowlisted: reason(403, 'Organization not allowlisted', 'all'),
  link_invalid: reason(403, 'Audio link is not valid', 'none', 'media'),
  cross_organization_denied: reason(403, 'Resource belongs to another organization', RESOURCES),
  demo_training_denied: reason(403, 'Demo or training resource', RESOURCES),

  encounter_not_found: reason(404, 'Encounter not found', RESOURCES),
  document_not_found: reason(404, 'Document not found', DOCS),
  transcript_not_found: reason(404, 'Transcript not found', ['getTranscript']),
  audio_not_found: reason(404, 'Audio not found', ['getAudio'], 'both'),
  route_not_found: reason(404, 'Route not found', 'none', 'both'),
  method_not_allowed: reason(405, 'Method not allowed', 'none', 'both'),

  link_expired: reason(410, 'Audio link has expired', 'none', 'media'),
  range_not_satisfiable: reason(416, 'Range not satisfiable', 'none', 'media'),

  invalid_limit: reason(422, 'Invalid limit', ['listEncounters']),
  invalid_offset: reason(422, 'Invalid offset', ['listEncounters']),
  invalid_sort: reason(422, 'Invalid sort order', ['listEncounters']),
  invalid_query: reason(422, 'Invalid query', ['listEncounters']),

  rate_limited: reason(429, 'Rate limit exceeded', 'all'),

  digest_key_unavailable: reason(503, 'Key verification unavailable', 'all'),
  audio_storage_unavailable: reason(503, 'Audio storage unavailable', ['getAudio'], 'both'),
  audit_unavailable: reason(503, 'Audit log unavailable', 'all'),
  service_unavailable: reason(503, 'Service temporarily unavailable', 'all'),
} as const satisfies Record<string, ReasonDefinition>;

export type ReasonCode = keyof typeof REASONS;

export const REASON_CODES = Object.keys(REASONS) as ReasonCode[];

/** The reason codes one route can answer with, grouped by HTTP status (for OpenAPI). */
export function reasonsByStatusFor(route: RouteId): Map<number, ReasonCode[]> {
  const byStatus = new Map<number, ReasonCode[]>();
  for (const code of REASON_CODES) {
    const { status, routes } = REASONS[code];
    const applies = routes === 'all' || (routes !== 'none' && routes.includes(route));
    if (!applies) continue;
    const list = byStatus.get(status) ?? [];
    list.push(code);
    byStatus.set(status, list);
  }
  return byStatus;
}
