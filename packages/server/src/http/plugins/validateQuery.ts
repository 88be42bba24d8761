/** Query validation runs after authorization (preValidation), in the contract's order. */
import type { FastifyRequest } from 'fastify';
import type { RouteDefinition } from '../../contract/routes.js';
import { type RawQuery, rejectUnsupportedKeys } from '../../domain/queryValidation.js';

export function validateQuery(route: RouteDefinition) {
  return async function validate(request: FastifyRequest): Promise<void> {
    const keys = Object.keys(request.query as RawQuery);
    if (keys.every((key) => route.queryKeys.includes(key))) return;
    rejectUnsupportedKeys(route, keysAsSent(request.url, keys));
  };
}

/**
 * The parsed query's keys in the order the request target gives them: a parsed object lists
 * integer-like keys (`?page=2&5=1`) first, whatever their place. Only read for a refusal.
 */
function keysAsSent(url: string, parsed: string[]): string[] {
  const q = url.indexOf('?');
  const position = new Map<string, number>();
  let index = 0;
  for (const key of new URLSearchParams(q === -1 ? '' : url.slice(q + 1)).keys()) {
    if (!position.has(key)) position.set(key, index);
    index++;
  }
  const at = (key: string) => position.get(key) ?? index;
  return [...parsed].sort((a, b) => at(a) - at(b));
}
