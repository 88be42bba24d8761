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
