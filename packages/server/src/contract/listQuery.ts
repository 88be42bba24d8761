/** The list route's query parameters (contract, route 1; decisions.md, query parameters). */
export const LIST_QUERY = {
  limit: { min: 1, max: 100, default: 50 },
  offset: { min: 0, max: 10_000, default: 0 },
  sortOrders: ['asc', 'desc'] as const,
  defaultSort: 'desc' as const,
} as const;

export type SortOrder = (typeof LIST_QUERY.sortOrders)[number];
