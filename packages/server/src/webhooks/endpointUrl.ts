/**
 * What a receiver endpoint URL may look like: absolute http(s), https unless the deployment
 * allows plain http, no user:password part (credentials in URLs end up in logs), no fragment.
 * Addresses are checked later, at connect time (egress.ts), because DNS answers can change.
 */

export type UrlProblem = 'invalid_url' | 'insecure_url';

export function endpointUrlProblem(
  text: string,
  policy: { readonly allowHttp: boolean },
): { problem: UrlProblem; message: string } | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'invalid_url', message: 'the endpoint URL is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { problem: 'invalid_url', message: 'the endpoint URL must be https (or http where allowed)' };
  }
  if (url.username !== '' || url.password !== '') {
    return { problem: 'invalid_url', message: 'the endpoint URL must not carry a user name or password' };
  }
  if (url.hash !== '')
    return { problem: 'invalid_url', message: 'the endpoint URL must not have a fragment' };
  if (url.protocol === 'http:' && !policy.allowHttp) {
    return {
      problem: 'insecure_url',
      message: 'the endpoint URL must be https (EDS_WEBHOOK_ALLOW_HTTP=true allows http)',
    };
  }
  return undefined;
}

/** Scheme, host and port only: what logs and per-endpoint limits use (never path or query). */
export function endpointOrigin(text: string): string {
  try {
    return new URL(text).origin;
  } catch {
    return 'invalid';
  }
}
