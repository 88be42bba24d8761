/**
 * Retiring a route (decisions.md, "Compatibility and deprecation"): the operator announces it in
 * `EDS_DEPRECATIONS`, read and checked here once at start-up. The answers' headers are written by
 * http/deprecationHeaders.ts.
 */
import { ROUTES, type RouteId } from './contract/routes.js';

export interface RouteDeprecation {
  /** When the route is (or was) deprecated, epoch milliseconds. */
  readonly deprecatedAt: number;
  /** When it stops answering, epoch milliseconds: at least 180 days after the announcement. */
  readonly sunsetAt: number;
  /** The notice partners read: an absolute http(s) URL or a path on this service (`/docs/...`). */
  readonly link: string;
}

export type Deprecations = Readonly<Partial<Record<RouteId, RouteDeprecation>>>;

/** The least notice a partner gets between the announcement and the sunset. */
export const MIN_NOTICE_DAYS = 180;
const DAY_MS = 86_400_000;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads the setting's JSON: `{"<operationId>": {"deprecation": "<RFC 3339>", "sunset": "<RFC
 * 3339>", "link": "<URL or /path>"}}`. Returns the routes' deprecations, or every problem found.
 */
export function parseDeprecations(raw: string): { value: Deprecations; problems: string[] } {
  const problems: string[] = [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { value: {}, problems: ['must be a JSON object keyed by operation ID'] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { value: {}, problems: ['must be a JSON object keyed by operation ID'] };
  }
  const value: Partial<Record<RouteId, RouteDeprecation>> = {};
  for (const [id, entry] of Object.entries(parsed)) {
    if (!Object.hasOwn(ROUTES, id)) {
      problems.push(`names "${id}", which is not an operation ID (${Object.keys(ROUTES).join(', ')})`);
      continue;
    }
    const found = parseEntry(entry);
    if (typeof found === 'string') problems.push(`${id}: ${found}`);
    else value[id as RouteId] = found;
  }
  return { value, problems };
}

function parseEntry(entry: unknown): RouteDeprecation | string {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return 'must be an object with deprecation, sunset and link';
  }
  const { deprecation, sunset, link, ...rest } = entry as Record<string, unknown>;
  const unknownKeys = Object.keys(rest);
  if (unknownKeys.length > 0) return `has unknown key(s) ${unknownKeys.join(', ')}`;
  const deprecatedAt = dateOf(deprecation);
  const sunsetAt = dateOf(sunset);
  if (deprecatedAt === undefined) return 'deprecation must be an RFC 3339 date-time with an offset';
  if (sunsetAt === undefined) return 'sunset must be an RFC 3339 date-time with an offset';
  if (sunsetAt - deprecatedAt < MIN_NOTICE_DAYS * DAY_MS) {
    return `sunset must be at least ${MIN_NOTICE_DAYS} days after deprecation`;
  }
  if (typeof link !== 'string' || !isNoticeLink(link)) {
    return 'link must be an http(s) URL or a path starting with /';
  }
  return { deprecatedAt, sunsetAt, link };
}

function dateOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || !RFC3339.test(value)) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

function isNoticeLink(link: string): boolean {
  if (/^\/(?!\/)[^\s<>"]*$/.test(link)) return true;
  try {
    const url = new URL(link);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !/[\s<>"]/.test(link);
  } catch {
    return false;
  }
}
