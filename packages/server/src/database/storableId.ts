/**
 * IDs are compared exactly; one that no database could hold (PostgreSQL text cannot contain NUL)
 * matches nothing, rather than failing the query.
 */
export function isStorableId(id: string): boolean {
  return !id.includes('\u0000');
}
