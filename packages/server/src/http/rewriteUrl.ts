/**
 * Path segments whose percent-encoding cannot be decoded (`%zz`, invalid UTF-8 such as `%C0%AF`)
 * are taken literally (their `%` re-encoded as `%25`) before routing. An opaque ID is compared
 * exactly, so such an ID reaches the route and answers 404 after authentication, like any other
 * ID that matches nothing (decisions.md), instead of failing as a bad URL before it.
 */
export function literalizeBadEscapes(url: string): string {
  if (!url.includes('%')) return url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const rest = q === -1 ? '' : url.slice(q);
  const segments = path.split('/');
  let changed = false;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (!segment.includes('%')) continue;
    try {
      decodeURIComponent(segment);
    } catch {
      segments[i] = segment.replaceAll('%', '%25');
      changed = true;
    }
  }
  return changed ? segments.join('/') + rest : url;
}

/** `scheme://authority` at the start of an absolute-form request target (RFC 9112 §3.2.2). */
const SCHEME_AND_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * An absolute-form target reduced to its path and query (`https://user:pw@host:444/p?q` →
 * `/p?q`): the authority of a request line is the client's to write, and nothing the service
 * builds (paging links, problem types, logs, audit records) may carry it. Other targets are
 * returned as they are.
 */
export function originForm(target: string): string {
  const authority = SCHEME_AND_AUTHORITY.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}
