/**
 * The embedded media host: serves the local folder's recordings to whoever holds a valid signed
 * link (see linkSigner.ts), with byte ranges for audio players. Plain node:http, so every header
 * and every log line is under this file's control: the query string of a link is its signature
 * and is never logged, only the path.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import type { ReasonCode } from '../contract/reasons.js';
import { ApiError, RETRY_SHORTLY } from '../domain/errors.js';
import { type ConnectionLimit, connectionLimitFor } from '../http/connectionLimit.js';
import { createListener } from '../http/listener.js';
import { writeProblem } from '../http/problem.js';
import { newId } from '../ids.js';
import { type FlatLineFields, flatInfoLine, pathOnly } from '../logger.js';
import type { Services } from '../services.js';
import { decideRange, type RangeDecision } from './byteRange.js';
import { servableContentType } from './contentType.js';
import { readLinkRequest } from './linkRequest.js';
import { checkMediaLink } from './linkSigner.js';
import { isServable, type OpenedObject, StorageUnavailableError } from './storage.js';

export interface MediaHost {
  /** Where the host listens (the real port when EDS_MEDIA_PORT=0). */
  readonly url: string;
  /** Stops accepting, lets running downloads finish within the shutdown grace, then cuts them. */
  close(): Promise<void>;
}

/** Sent on every answer: links are credentials, so nothing about them may be cached or leaked. */
const ALWAYS = {
  'Cache-Control': 'private, no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
} as const;

export async function startMediaHost(
  services: Services,
  connections: ConnectionLimit = connectionLimitFor(services),
): Promise<MediaHost> {
  const { config, media } = services;
  const log = services.logger.child({ component: 'media_host' });
  const requestLine = flatInfoLine(log, 'media request');
  // Timeouts, connection bounds, absolute-form targets, Host, CONNECT, unreadable requests.
  const server = createListener(
    { port: 'media', http: config.http, connections, answerClientErrors: true },
    (req, res) => {
      handle(services, log, requestLine, req, res).catch(() => res.destroy());
    },
  );
  await listen(server, config.mediaPort, config.host);
  const url = listeningUrl(server.address() as AddressInfo);
  // A configured base URL naming port 0 cannot be where links should point: use the real port.
  if (isServable(media) && new URL(config.mediaBaseUrl).port === '0') media.useBaseUrl(url);
  if (!isServable(media)) {
    log.info({ driver: media.driver }, 'media host has nothing to serve: links point at the object store');
  }
  // At debug: `eds serve` says where the media host listens in its `api listening` line.
  log.debug({ url }, 'media host listening');
  return { url, close: () => closeServer(server, config.http.shutdownGraceMs) };
}

async function handle(
  services: Services,
  log: Services['logger'],
  requestLine: (fields: FlatLineFields) => void,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const started = performance.now();
  const requestId = newId('req');
  let reasonCode: ReasonCode | undefined;
  res.on('close', () => {
    const status = res.statusCode;
    const durationMs = performance.now() - started;
    services.metrics.httpDuration.observe('media_host', status, durationMs / 1000);
    services.metrics.responses.count('media_host', status, reasonCode ?? '');
    // Ids, numbers and the path without its query, which is the link's signature.
    requestLine({
      request_id: requestId,
      method: req.method,
      path: pathOnly(req.url ?? '/'),
      status,
      reason_code: reasonCode,
      completed: res.writableFinished,
      duration_ms: Math.round(durationMs),
    });
  });
  for (const [name, value] of Object.entries(ALWAYS)) res.setHeader(name, value);
  res.setHeader('X-Request-Id', requestId);

  try {
    await serve(services, req, res);
  } catch (error) {
    const failure = hostFailure(error, log, requestId);
    reasonCode = failure.reasonCode;
    if (res.headersSent) res.destroy();
    else writeProblem(res, failure, requestId, req.method);
  }
}

async function serve(services: Services, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const link = readLinkRequest(req.url ?? '/');
  if (link.kind === 'other_path') throw new ApiError('route_not_found', 'No such path.');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    throw new ApiError('method_not_allowed', 'Only GET and HEAD are allowed.', { Allow: 'GET, HEAD' });
  }
  if (link.kind === 'malformed') throw invalidLink();
  const check = checkMediaLink(link.claims, services.config.secrets.mediaSigning, services.clock());
  if (check === 'bad_signature') throw invalidLink();
  if (check === 'expired') {
    throw new ApiError('link_expired', 'The link has expired; request a new one from the API.');
  }

  const { media } = services;
  const object = isServable(media) ? await media.open(link.claims.key) : null;
  if (object === null) throw new ApiError('audio_not_found', 'The recording is gone from storage.');
  try {
    await sendObject(req, res, object, servableContentType(link.claims.type));
  } finally {
    await object.close();
  }
}

function invalidLink(): ApiError {
  return new ApiError('link_invalid', 'The link is not valid; request a new one from the API.');
}

async function sendObject(
  req: IncomingMessage,
  res: ServerResponse,
  object: OpenedObject,
  contentType: string,
): Promise<void> {
  const etag = `"${object.size.toString(16)}-${Math.trunc(object.modifiedMs).toString(16)}"`;
  const lastModified = new Date(object.modifiedMs).toUTCString();
  const range = ifRangeHolds(req.headers['if-range'], etag, object.modifiedMs)
    ? decideRange(req.headers.range, object.size)
    : ({ kind: 'full' } as RangeDecision);
  const common = { 'Accept-Ranges': 'bytes', ETag: etag, 'Last-Modified': lastModified };

  if (range.kind === 'unsatisfiable') {
    throw new ApiError('range_not_satisfiable', 'The requested range is outside the recording.', {
      ...common,
      'Content-Range': `bytes */${object.size}`,
    });
  }
  const span = range.kind === 'partial' ? { start: range.start, end: range.end } : undefined;
  res.writeHead(span ? 206 : 200, {
    ...common,
    'Content-Type': contentType,
    'Content-Length': span ? span.end - span.start + 1 : object.size,
    ...(span ? { 'Content-Range': `bytes ${span.start}-${span.end}/${object.size}` } : {}),
  });
  if (req.method === 'HEAD' || object.size === 0) {
    res.end();
    return;
  }
  try {
    await pipeline(object.read(span), res);
  } catch {
    // The client went away or the disk failed mid-body; the status line is already sent, so the
    // only honest signal left is a cut connection (pipeline has destroyed both ends).
  }
}

/** `If-Range` (RFC 9110 §13.1.5): a range applies only if the object is still the one named. */
function ifRangeHolds(header: string | string[] | undefined, etag: string, modifiedMs: number): boolean {
  if (header === undefined) return true;
  if (typeof header !== 'string') return false;
  if (header.startsWith('"') || header.startsWith('W/')) return header === etag;
  const date = Date.parse(header);
  return Number.isFinite(date) && date === Math.floor(modifiedMs / 1000) * 1000;
}

function hostFailure(error: unknown, log: Services['logger'], requestId: string): ApiError {
  if (error instanceof ApiError) return error;
  const detail = 'Audio storage is temporarily unavailable; try again shortly.';
  if (error instanceof StorageUnavailableError) {
    log.warn(
      { request_id: requestId, err: { name: error.name, message: error.message } },
      'media storage unavailable',
    );
  } else {
    // Only the name and code: messages of fs errors carry absolute paths.
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    log.error({ request_id: requestId, err: { name: (error as Error)?.name, code } }, 'media host failure');
  }
  return new ApiError('audio_storage_unavailable', detail, RETRY_SHORTLY);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function listeningUrl(address: AddressInfo): string {
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  const host = wildcard ? '127.0.0.1' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const cutoff = setTimeout(() => server.closeAllConnections(), graceMs);
    cutoff.unref();
    server.close(() => {
      clearTimeout(cutoff);
      resolve();
    });
    server.closeIdleConnections();
  });
}
