/**
 * Case-insensitive header lookup over the shapes receivers hand us: Node's IncomingHttpHeaders
 * (lowercased, arrays for repeats), a fetch `Headers`, `[name, value]` pairs, or Node's flat
 * `rawHeaders` list. Repeated headers are joined with ", " as HTTP does (RFC 9110 5.3).
 */

export type HeaderValue = string | readonly string[] | number | undefined;

export type HeadersLike =
  | { get(name: string): string | null }
  | Readonly<Record<string, HeaderValue>>
  | readonly (readonly [string, string])[]
  | readonly string[];

export function headerReader(headers: HeadersLike): (name: string) => string | undefined {
  if (isFetchHeaders(headers)) return (name) => headers.get(name) ?? undefined;
  if (Array.isArray(headers)) return fromList(headers as readonly (string | readonly [string, string])[]);
  const record = headers as Readonly<Record<string, HeaderValue>>;
  return (name) => {
    const wanted = name.toLowerCase();
    const values: string[] = [];
    for (const [key, value] of Object.entries(record)) {
      if (key.toLowerCase() !== wanted || value === undefined) continue;
      if (Array.isArray(value)) values.push(...(value as string[]));
      else values.push(String(value));
    }
    return values.length > 0 ? values.join(', ') : undefined;
  };
}

function isFetchHeaders(headers: HeadersLike): headers is { get(name: string): string | null } {
  return !Array.isArray(headers) && typeof (headers as { get?: unknown }).get === 'function';
}

function fromList(
  list: readonly (string | readonly [string, string])[],
): (name: string) => string | undefined {
  const pairs: [string, string][] = [];
  if (list.every((entry) => typeof entry === 'string')) {
    for (let i = 0; i + 1 < list.length; i += 2) pairs.push([list[i] as string, list[i + 1] as string]);
  } else {
    for (const entry of list) if (Array.isArray(entry)) pairs.push([String(entry[0]), String(entry[1])]);
  }
  return (name) => {
    const wanted = name.toLowerCase();
    const values = pairs.filter(([key]) => key.toLowerCase() === wanted).map(([, value]) => value);
    return values.length > 0 ? values.join(', ') : undefined;
  };
}
