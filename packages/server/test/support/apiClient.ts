/**
 * A small HTTP client for tests that checks every response it receives, errors included,
 * against the OpenAPI document the server itself serves (an independent JSON Schema 2020-12
 * validator, Ajv), so the document and the behaviour cannot drift apart.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface ApiClient {
  /** Signatures of signed links this client received: they must never reach a log. */
  readonly linkSecrets: Set<string>;
  get<T = any>(
    path: string,
    options?: { token?: string; headers?: Record<string, string>; method?: string },
  ): Promise<ApiResponse<T>>;
  openapi(): Promise<any>;
}

type Validator = ((data: unknown) => boolean) & { errors?: unknown };

export function createApiClient(baseUrl: string): ApiClient {
  let documentPromise: Promise<any> | undefined;
  let ajv: InstanceType<typeof Ajv2020> | undefined;
  const validators = new Map<string, Validator>();

  const openapi = () => {
    documentPromise ??= fetch(`${baseUrl}/openapi/v1/openapi.json`).then((r) => r.json());
    return documentPromise;
  };

  async function validatorFor(
    path: string,
    status: number,
    contentType: string,
  ): Promise<Validator | undefined> {
    const doc = await openapi();
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, allErrors: true });
      (addFormats as unknown as (a: unknown) => void)(ajv);
      ajv.addSchema(doc, 'openapi.json');
    }
    const pathname = new URL(path, baseUrl).pathname;
    const template = Object.keys(doc.paths).find((t) =>
      new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname),
    );
    const media = contentType.split(';')[0]!.trim();
    let pointer: string;
    if (template && doc.paths[template].get?.responses?.[status]) {
      const escaped = template.replaceAll('~', '~0').replaceAll('/', '~1');
      pointer = `openapi.json#/paths/${escaped}/get/responses/${status}/content/${media.replaceAll('/', '~1')}/schema`;
      if (!doc.paths[template].get.responses[status].content?.[media]) {
        throw new Error(`${pathname}: response ${status} with ${media} is not in the OpenAPI document`);
      }
    } else if (!template || pathname.startsWith('/external/') || status >= 400) {
      if (media !== 'application/problem+json') return undefined;
      if (template && status !== 405) {
        throw new Error(`${pathname}: status ${status} is not documented in the OpenAPI document`);
      }
      pointer = 'openapi.json#/components/schemas/Problem';
    } else {
      return undefined;
    }
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: pointer }) as Validator;
      validators.set(pointer, validate);
    }
    return validate;
  }

  /** A 304 has no body to validate; the OpenAPI document must still list it for the route. */
  async function assertNotModifiedDocumented(path: string): Promise<void> {
    const doc = await openapi();
    const pathname = new URL(path, baseUrl).pathname;
    const template = Object.keys(doc.paths).find((t) =>
      new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname),
    );
    if (!template || !doc.paths[template].get?.responses?.[304]) {
      throw new Error(`${pathname}: status 304 is not documented in the OpenAPI document`);
    }
  }

  const linkSecrets = new Set<string>();
  return {
    linkSecrets,
    openapi,
    async get(path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
      const method = options.method ?? 'GET';
      const response = await fetch(`${baseUrl}${path}`, { method, headers });
      const text = await response.text();
      const contentType = response.headers.get('content-type') ?? '';
      const body = text && contentType.includes('json') ? JSON.parse(text) : text;
      if (method === 'GET' && response.status === 304) await assertNotModifiedDocumented(path);
      if (method === 'GET' && text) {
        const validate = await validatorFor(path, response.status, contentType);
        if (validate && !validate(body)) {
          throw new Error(
            `response ${response.status} for ${path} does not match the OpenAPI document: ${JSON.stringify(validate.errors)}\n${text.slice(0, 500)}`,
          );
        }
      }
      if (typeof body === 'object' && body && typeof body.audio_url === 'string') {
        const link = new URL(body.audio_url);
        linkSecrets.add(link.search.slice(1));
        for (const value of link.searchParams.values()) if (value.length >= 16) linkSecrets.add(value);
      }
      if (
        response.status >= 400 &&
        options.token &&
        options.token.length >= 16 &&
        text.includes(options.token)
      ) {
        throw new Error(`the error body for ${path} echoes the caller's token`);
      }
      return { status: response.status, headers: response.headers, body, text };
    },
  };
}
