/**
 * The `Range` header, for single byte ranges (RFC 9110 §14). What audio players send is one
 * range; a multi-range or malformed header is ignored (the whole object, 200), as the RFC allows,
 * rather than answered with multipart bodies.
 */
export type RangeDecision =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes[ \t]*=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;

export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined) return { kind: 'full' };
  const match = SINGLE_RANGE.exec(header);
  if (!match) return { kind: 'full' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'full' };

  if (first === '') {
    // Suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - length), end: size - 1 };
  }

  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'full' }; // invalid: ignored
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return { kind: 'partial', start, end };
}
