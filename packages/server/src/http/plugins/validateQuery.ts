/** Query validation runs after authorization (preValidation), in the contract's order. */
import type { FastifyRequest } from 'fastify';
import type { RouteDefinition } from '../../contract/routes.js';
import { type RawQuery, rejectUnsupportedKeys } from '../../domain/queryValidation.js';

export function validateQuery(route: RouteDefinition) {
  return async function validate(request: FastifyRequest): Promise<void> {
    rejectUnsupportedKeys(route, request.query as RawQuery);
  };
}
