/**
 * The parts of Node's `http.IncomingMessage` and `http.ServerResponse` the adapters use, declared
 * here so the SDK's published types stand alone: a project without `@types/node` (an edge or
 * browser-typed build) still type-checks, and Node's real objects fit these shapes as they are.
 */
import type { HeaderValue } from '../headers.js';

/** A request whose body can be read chunk by chunk (Node's IncomingMessage is one). */
export interface IncomingMessageLike extends AsyncIterable<unknown> {
  readonly method?: string | undefined;
  readonly headers: Readonly<Record<string, HeaderValue>>;
}

/** A response the adapters answer on (Node's ServerResponse is one). */
export interface ServerResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/** Bytes as Node hands them over (a Buffer): a Uint8Array that can also spell itself out. */
export type RawBytes = Uint8Array & {
  toString(encoding?: 'utf8' | 'utf-8' | 'hex' | 'base64' | 'base64url' | 'latin1'): string;
};
