/**
 * Query validation runs after authorization (preValidation), in the contract's order, from the
 * route's query schema compiled once here. The handler reads the checked values, defaults filled
 * in, as `request.query`.
 */
import type { FastifyRequest } from 'fastify';
import type { TObject } from 'typebox';
import type { RouteDefinition } from '../../contract/routes.js';
import { compileQuery, type QueryRules, type RawQuery } from '../../domain/queryValidation.js';

export function validateQuery(route: RouteDefinition, rules: QueryRules<TObject> | undefined) {
  const validator = compileQuery(route.query, rules);
  return async function validate(request: FastifyRequest): Promise<void> {
    request.query = validator(request.query as RawQuery, request.url);
  };
}
