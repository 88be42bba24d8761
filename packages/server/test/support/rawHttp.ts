/**
 * HTTP/1.1 over a plain socket, for requests no HTTP client will send: absolute-form targets,
 * repeated headers, no Host, CONNECT, methods fetch refuses. The request is written as given and
 * the answer read until the server closes the connection (send `Connection: close`, or a request
 * the server answers by closing).
 */
import { connect } from 'node:net';
import type { ApiResponse } from './apiClient.js';

export interface RawResponse {
  status: number;
  /** Header names lower-cased; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The bytes as received, for asserting that something appears nowhere. */
  raw: string;
}

export function rawRequest(baseUrl: string, request: string): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      try {
        resolve(parseResponse(raw));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** A request line and headers, CRLF-joined, ending the head; `Connection: close` added. */
export function requestText(requestLine: string, headers: readonly string[] = []): string {
  return `${[requestLine, ...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`;
}

function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no complete response in ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = raw.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status, headers, body: Buffer.from(body, 'latin1').toString('utf8'), raw };
}

function unchunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    const size = Number.parseInt(text.slice(at, lineEnd), 16);
    if (!(size > 0)) return out;
    out += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** The answer in the shape of the API client's, for the assertions written against that. */
export function asApiResponse(response: RawResponse): ApiResponse {
  const json = (response.headers['content-type'] ?? '').includes('json');
  return {
    status: response.status,
    headers: new Headers(response.headers),
    body: json ? JSON.parse(response.body) : response.body,
    text: response.body,
  };
}
