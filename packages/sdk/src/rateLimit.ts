/**
 * The service's rate-limit fields (draft-ietf-httpapi-ratelimit-headers, structured-field form):
 * `RateLimit-Policy: "key";q=200;w=2` and `RateLimit: "key";r=57;t=1`. Read from every answer so
 * a caller can pace itself before it is refused (see `EncounterDataClient.rateLimit`).
 */

export interface RateLimitStatus {
  /** The policy's name (the service uses "key": the bucket of this API key). */
  readonly policy: string;
  /** Requests the key may make at once: the bucket size (`q`). */
  readonly quota: number | undefined;
  /** Seconds the service needs to refill the whole quota (`w`). */
  readonly windowSeconds: number | undefined;
  /** Requests left right now (`r`). */
  readonly remaining: number;
  /** Seconds until the quota is full again (`t`). */
  readonly resetSeconds: number;
  /** When this answer was received. */
  readonly observedAt: Date;
}

interface Member {
  name: string;
  params: Map<string, string>;
}

/** The status the two fields describe, or undefined when the answer carries no (readable) RateLimit. */
export function readRateLimit(headers: Headers, now: Date = new Date()): RateLimitStatus | undefined {
  const limit = parseList(headers.get('ratelimit'));
  const first = limit[0];
  if (!first) return undefined;
  const remaining = integer(first.params.get('r'));
  const resetSeconds = integer(first.params.get('t'));
  if (remaining === undefined || resetSeconds === undefined) return undefined;
  const policy = parseList(headers.get('ratelimit-policy')).find((m) => m.name === first.name);
  return {
    policy: first.name,
    quota: integer(policy?.params.get('q')),
    windowSeconds: integer(policy?.params.get('w')),
    remaining,
    resetSeconds,
    observedAt: now,
  };
}

/** A structured-field List of items with parameters, as far as these two fields use it. */
function parseList(value: string | null): Member[] {
  if (!value) return [];
  const members: Member[] = [];
  for (const raw of splitOutsideQuotes(value, ',')) {
    const [item = '', ...params] = splitOutsideQuotes(raw, ';');
    const name = unquote(item.trim());
    if (name === '') continue;
    const map = new Map<string, string>();
    for (const param of params) {
      const eq = param.indexOf('=');
      const key = (eq === -1 ? param : param.slice(0, eq)).trim();
      if (key) map.set(key, eq === -1 ? '?1' : unquote(param.slice(eq + 1).trim()));
    }
    members.push({ name, params: map });
  }
  return members;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && quoted) {
      current += c + (text[++i] ?? '');
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

function unquote(text: string): string {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    return text.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return text;
}

function integer(text: string | undefined): number | undefined {
  return text !== undefined && /^[0-9]{1,15}$/.test(text) ? Number(text) : undefined;
}
