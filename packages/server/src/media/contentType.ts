/**
 * The Content-Type a media link may be served with. Recordings are audio (or video); anything
 * else an import file might claim (text/html, image/svg+xml, ...) is served as opaque bytes, so a
 * link on the media host can never be made to render a page.
 */
const MEDIA_TYPE =
  /^(?:audio|video)\/[a-z0-9][a-z0-9.+-]*(?:\s*;\s*[a-z0-9.+-]+=(?:[a-z0-9.+-]+|"[^"\\\r\n]*"))*$/;

export const OPAQUE_CONTENT_TYPE = 'application/octet-stream';

export function servableContentType(contentType: string): string {
  const normalized = contentType.trim().toLowerCase();
  if (normalized.length <= 200 && (MEDIA_TYPE.test(normalized) || normalized === 'application/ogg')) {
    return normalized;
  }
  return OPAQUE_CONTENT_TYPE;
}
