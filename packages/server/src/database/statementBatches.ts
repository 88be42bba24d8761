/**
 * Multi-row statements in batches: a statement carries one bound parameter per column of every
 * row it writes or matches, and both dialects cap the parameters of one statement.
 */

/** Rows per statement: well under both dialects' bound-parameter limits. */
const CHUNK = 400;

/** Rows in statements of at most `size`. */
export function chunks<T>(rows: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
