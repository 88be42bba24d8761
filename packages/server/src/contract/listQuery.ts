/**
 * The routes' query parameters as TypeBox schemas (contract, route 1; decisions.md, query
 * parameters). One schema per route both documents the parameters in OpenAPI and validates them
 * (domain/queryValidation.ts): the keys it lists are the only ones the route accepts.
 */
import Type, { type Static } from 'typebox';

export const LIST_QUERY = {
  limit: { min: 1, max: 100, default: 50 },
  offset: { min: 0, max: 10_000, default: 0 },
  sortOrders: ['asc', 'desc'] as const,
  defaultSort: 'desc' as const,
} as const;

export type SortOrder = (typeof LIST_QUERY.sortOrders)[number];

export const ListEncountersQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: LIST_QUERY.limit.min,
        maximum: LIST_QUERY.limit.max,
        default: LIST_QUERY.limit.default,
        description: 'Canonical decimal integer.',
      }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: LIST_QUERY.offset.min,
        maximum: LIST_QUERY.offset.max,
        default: LIST_QUERY.offset.default,
        description: 'Canonical decimal integer.',
      }),
    ),
    // A plain string enum (not a union of literals), so the reference shows the choices.
    sort_order: Type.Optional(
      Type.Unsafe<SortOrder>({
        type: 'string',
        enum: [...LIST_QUERY.sortOrders],
        default: LIST_QUERY.defaultSort,
        description: 'Order by created_at, ties by encounter_id.',
      }),
    ),
    start_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Timezone-aware RFC 3339 datetime; inclusive lower bound on created_at.',
      }),
    ),
    end_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Timezone-aware RFC 3339 datetime; exclusive upper bound on created_at.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The list route's query once validated: every parameter with a default is present. */
export type ListQueryValues = Required<
  Pick<Static<typeof ListEncountersQuery>, 'limit' | 'offset' | 'sort_order'>
> &
  Pick<Static<typeof ListEncountersQuery>, 'start_at' | 'end_at'>;

/** Routes that take no query parameter: every key is unsupported. */
export const NoQuery = Type.Object({}, { additionalProperties: false });
