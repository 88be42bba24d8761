/**
 * Whether a receiver can be reached, without sending it anything: its host resolved and judged
 * under the egress policy, a connection opened (through the forward proxy when one is set) and,
 * for https, a TLS handshake that verifies the certificate against the receiver's name. No HTTP
 * request is made, so no event or clinical data can leave.
 */
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { request as httpRequest } from '../nodeHttp.js';
import { errorClassOf, ProxyUnreachableError } from './classify.js';
import { directConnector, resolveUnderPolicy } from './egress.js';

export interface ReachabilityPolicy {
  readonly allowPrivateNetworks: boolean;
  readonly timeoutMs: number;
  readonly proxyUrl: string | undefined;
}

/** Undefined when reachable; otherwise why not (an error class and its code, never a URL). */
export async function unreachableBecause(
  urlText: string,
  policy: ReachabilityPolicy,
): Promise<string | undefined> {
  const url = new URL(urlText);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  try {
    const socket =
      policy.proxyUrl === undefined
        ? await connectDirect(hostname, port, url.protocol, policy)
        : await connectThroughProxy(hostname, port, url.protocol, policy, policy.proxyUrl, deadline);
    socket.destroy();
    return undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const detail =
      error instanceof Error && errorClassOf(error) === 'egress_refused' ? `: ${error.message}` : '';
    return `${errorClassOf(error)}${typeof code === 'string' && !code.startsWith('EDS_') ? ` (${code})` : ''}${detail}`;
  }
}

function connectDirect(
  hostname: string,
  port: number,
  protocol: string,
  policy: ReachabilityPolicy,
): Promise<Socket> {
  const connect = directConnector({
    allowPrivateNetworks: policy.allowPrivateNetworks,
    connectTimeoutMs: policy.timeoutMs,
    connectionsPerOrigin: 1,
  });
  return new Promise((resolve, reject) =>
    connect(
      {
        hostname,
        host: hostname,
        protocol,
        port: String(port),
        servername: hostname,
        localAddress: null,
        httpSocket: undefined,
      },
      (err, socket) => (err || !socket ? reject(err ?? new Error('no socket')) : resolve(socket as Socket)),
    ),
  );
}

/** The service's own checks first, then a CONNECT tunnel, then TLS end to end inside it. */
async function connectThroughProxy(
  hostname: string,
  port: number,
  protocol: string,
  policy: ReachabilityPolicy,
  proxyUrl: string,
  signal: AbortSignal,
): Promise<Socket> {
  await resolveUnderPolicy(hostname, policy.allowPrivateNetworks);
  const proxy = new URL(proxyUrl);
  const headers: Record<string, string> = { host: `${hostname}:${port}` };
  if (proxy.username !== '') {
    const user = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
    headers['proxy-authorization'] = `Basic ${Buffer.from(user).toString('base64')}`;
  }
  const tunnel = await new Promise<Socket>((resolve, reject) => {
    const req = httpRequest({
      host: proxy.hostname,
      port: Number(proxy.port || 80),
      method: 'CONNECT',
      path: `${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`,
      headers,
      signal,
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) return resolve(socket);
      socket.destroy();
      // The same words as the HTTP client's, so the class is the same: proxy_refused.
      reject(new Error(`Proxy response (${res.statusCode}) !== 200 when HTTP Tunneling`));
    });
    req.once('error', (error) => reject(new ProxyUnreachableError(error)));
    req.end();
  });
  if (protocol !== 'https:') return tunnel;
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({ socket: tunnel, servername: hostname });
    const onAbort = () => secure.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' }));
    signal.addEventListener('abort', onAbort, { once: true });
    secure.once('secureConnect', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(secure);
    });
    secure.once('error', reject);
  });
}
