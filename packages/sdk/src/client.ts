/**
 * The typed client of the REST API v1: one method per route, plus walks over all pages of a
 * window. Runtime needs: the global `fetch` (Node 20) and nothing else.
 */
import { AudioLink } from './audioLink.js';
import { inspectCustom } from './inspect.js';
import { type EncounterWindow, walkPages } from './paginate.js';
import type { RateLimitStatus } from './rateLimit.js';
import { type Fetched, type RequestOptions, Transport } from './transport.js';
import type {
  AudioLinkBody,
  DocumentDetail,
  Encounter,
  EncounterList,
  ListEncountersParams,
  Transcript,
} from './types.js';

export interface EncounterDataClientOptions {
  /** The deployment's base URL, e.g. `https://eds.example.com` (paths start at /external/v1). */
  baseUrl: string;
  /** An organization-scoped API key. Sent only in the Authorization header, never printed. */
  apiKey: string;
  /** Per attempt, body included. Default 10,000 ms. */
  timeoutMs?: number;
  /**
   * Retries after the first attempt, for network failures, timeouts, 503 and 429 (after the
   * answer's Retry-After). Default 2.
   */
  retries?: number;
  /** Ceiling of the first retry's jittered delay. Default 250 ms; doubles per retry. */
  retryBaseDelayMs?: number;
  /** Largest retry delay, and the longest Retry-After honored before giving up. Default 10,000 ms. */
  retryMaxDelayMs?: number;
  /** A fetch implementation (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch;
}

const BASE = '/external/v1/encounters';

export class EncounterDataClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly #transport: Transport;

  constructor(options: EncounterDataClientOptions) {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new TypeError('EncounterDataClient needs an apiKey.');
    }
    const base = new URL(options.baseUrl);
    if (base.username || base.password) throw new TypeError('baseUrl must not carry credentials.');
    if (base.search || base.hash) throw new TypeError('baseUrl must not carry a query or fragment.');
    this.baseUrl = base.toString().replace(/\/+$/, '');
    this.timeoutMs = positive('timeoutMs', options.timeoutMs ?? 10_000);
    this.retries = nonNegativeInteger('retries', options.retries ?? 2);
    this.#transport = new Transport({
      baseUrl: this.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: this.timeoutMs,
      retries: this.retries,
      retryBaseDelayMs: nonNegative('retryBaseDelayMs', options.retryBaseDelayMs ?? 250),
      retryMaxDelayMs: nonNegative('retryMaxDelayMs', options.retryMaxDelayMs ?? 10_000),
      fetch: options.fetch ?? globalThis.fetch,
    });
  }

  /** Route 1: one page of encounters. The server validates the values (422 invalid_*). */
  listEncounters(params: ListEncountersParams = {}, opts?: RequestOptions): Promise<EncounterList> {
    return this.#transport.getJson<EncounterList>(BASE, BASE, listQuery(params), opts);
  }

  /**
   * The rate-limit fields of the latest answer that carried them: requests left, seconds until
   * the quota is full again, the quota and its window. Undefined before the first answer.
   */
  get rateLimit(): RateLimitStatus | undefined {
    return this.#transport.lastRateLimit;
  }

  /**
   * Route 1, conditional: sends `If-None-Match: etag` (when given) and resolves to
   * `{ notModified: true }` if the page has not changed since, else to the page and its ETag.
   */
  listEncountersIfChanged(
    params: ListEncountersParams,
    etag: string | undefined,
    opts: RequestOptions = {},
  ): Promise<Fetched<EncounterList>> {
    return this.#transport.get<EncounterList>(BASE, BASE, listQuery(params), opts, etag);
  }

  /** Route 2, conditional (see `listEncountersIfChanged`). */
  async getEncounterIfChanged(
    encounterId: string,
    etag: string | undefined,
    opts: RequestOptions = {},
  ): Promise<Fetched<Encounter>> {
    const path = `${BASE}/${segment('encounterId', encounterId)}`;
    const fetched = await this.#transport.get<{ encounter: Encounter }>(
      `${BASE}/{encounter_id}`,
      path,
      undefined,
      opts,
      etag,
    );
    return fetched.notModified ? fetched : { ...fetched, body: fetched.body.encounter };
  }

  /** Route 3, conditional (see `listEncountersIfChanged`). */
  async getDocumentIfChanged(
    encounterId: string,
    documentId: string,
    etag: string | undefined,
    opts: RequestOptions = {},
  ): Promise<Fetched<DocumentDetail>> {
    const fetched = await this.#conditionalDocument<{ document: DocumentDetail }>(
      encounterId,
      documentId,
      '',
      etag,
      opts,
    );
    return fetched.notModified ? fetched : { ...fetched, body: fetched.body.document };
  }

  /** Route 4, conditional (see `listEncountersIfChanged`). */
  getTranscriptIfChanged(
    encounterId: string,
    documentId: string,
    etag: string | undefined,
    opts: RequestOptions = {},
  ): Promise<Fetched<Transcript>> {
    return this.#conditionalDocument<Transcript>(encounterId, documentId, '/transcript', etag, opts);
  }

  /** Route 2. */
  async getEncounter(encounterId: string, opts?: RequestOptions): Promise<Encounter> {
    const path = `${BASE}/${segment('encounterId', encounterId)}`;
    const body = await this.#transport.getJson<{ encounter: Encounter }>(
      `${BASE}/{encounter_id}`,
      path,
      undefined,
      opts,
    );
    return body.encounter;
  }

  /** Route 3. `content` is present for schema_type document, absent for ambient_transcript. */
  async getDocument(encounterId: string, documentId: string, opts?: RequestOptions): Promise<DocumentDetail> {
    const body = await this.#document<{ document: DocumentDetail }>(encounterId, documentId, '', opts);
    return body.document;
  }

  /** Route 4: the finalized speaker turns of an ambient transcript document. */
  getTranscript(encounterId: string, documentId: string, opts?: RequestOptions): Promise<Transcript> {
    return this.#document<Transcript>(encounterId, documentId, '/transcript', opts);
  }

  /** Route 5: a short-lived link; the returned object refuses to give the URL once expired. */
  async getAudioLink(encounterId: string, documentId: string, opts?: RequestOptions): Promise<AudioLink> {
    const body = await this.#document<AudioLinkBody>(encounterId, documentId, '/audio', opts);
    return new AudioLink(body);
  }

  /**
   * Every page of a window, in order, past the 10,000 offset cap (see paginate.ts). There is no
   * snapshot across pages: for sync jobs page `asc` with overlapping windows and dedupe by id.
   */
  paginateEncounters(window: EncounterWindow = {}, opts: RequestOptions = {}): AsyncGenerator<EncounterList> {
    return walkPages((params, o) => this.listEncounters(params, o), window, opts);
  }

  /** Every encounter of a window, one at a time (see `paginateEncounters`). */
  async *iterateEncounters(
    window: EncounterWindow = {},
    opts: RequestOptions = {},
  ): AsyncGenerator<Encounter> {
    for await (const page of this.paginateEncounters(window, opts)) yield* page.items;
  }

  #document<T>(encounterId: string, documentId: string, suffix: string, opts?: RequestOptions): Promise<T> {
    return this.#transport.getJson<T>(
      documentRoute(suffix),
      documentPath(encounterId, documentId, suffix),
      undefined,
      opts,
    );
  }

  #conditionalDocument<T>(
    encounterId: string,
    documentId: string,
    suffix: string,
    etag: string | undefined,
    opts: RequestOptions,
  ): Promise<Fetched<T>> {
    const path = documentPath(encounterId, documentId, suffix);
    return this.#transport.get<T>(documentRoute(suffix), path, undefined, opts, etag);
  }

  toString(): string {
    return `EncounterDataClient(${this.baseUrl})`;
  }

  /** What logging the client shows: never the key. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, timeoutMs: this.timeoutMs, retries: this.retries, apiKey: '[redacted]' };
  }

  [inspectCustom](): string {
    return `EncounterDataClient ${JSON.stringify(this.toJSON())}`;
  }
}

function documentPath(encounterId: string, documentId: string, suffix: string): string {
  return (
    `${BASE}/${segment('encounterId', encounterId)}` +
    `/documents/${segment('documentId', documentId)}${suffix}`
  );
}

function documentRoute(suffix: string): string {
  return `${BASE}/{encounter_id}/documents/{document_id}${suffix}`;
}

function listQuery(params: ListEncountersParams): URLSearchParams {
  const query = new URLSearchParams();
  // Fixed order, and only the five contract keys: anything else would be unsupported_filter.
  if (params.limit !== undefined) query.set('limit', String(params.limit));
  if (params.offset !== undefined) query.set('offset', String(params.offset));
  if (params.sort_order !== undefined) query.set('sort_order', params.sort_order);
  if (params.start_at !== undefined) query.set('start_at', dateTime(params.start_at));
  if (params.end_at !== undefined) query.set('end_at', dateTime(params.end_at));
  return query;
}

function dateTime(value: string | Date): string {
  return value instanceof Date ? value.toISOString() : value;
}

/**
 * One path segment, percent-encoded. `.` and `..` cannot travel in a URL path (URL parsing
 * resolves them, even as %2E), and an empty ID would address another route, so they are refused.
 */
function segment(name: string, value: string): string {
  if (typeof value !== 'string' || value === '' || value === '.' || value === '..') {
    throw new TypeError(`${name} must be a non-empty ID other than "." or "..".`);
  }
  return encodeURIComponent(value);
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a positive number.`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be zero or more.`);
  return value;
}

function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0)
    throw new TypeError(`${name} must be a whole number, zero or more.`);
  return value;
}
