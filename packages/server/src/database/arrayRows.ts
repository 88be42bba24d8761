/**
 * Rows read as arrays, turned into objects keyed by column name. A function generated once per
 * statement builds each object with all its properties at once, which costs less than the
 * drivers' property-by-property row objects (see preparedQuery.ts).
 */

/** A row builder for columns `names`, read from `values[offset + i]`. */
export function arrayRowBuilder(names: readonly string[], offset = 0): (values: unknown[]) => unknown {
  // Column names come from the service's own compiled SQL, never from a request; quoted anyway.
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i + offset}]`).join(', ');
  return new Function('values', `return { ${fields} };`) as (values: unknown[]) => unknown;
}
