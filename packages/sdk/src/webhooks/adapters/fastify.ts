/**
 * Fastify adapter, without a fastify dependency: the instance is accepted structurally. It
 * registers the route in its own encapsulated scope whose only content-type parser keeps
 * `application/json` bodies as a raw Buffer, so the rest of the app keeps Fastify's JSON parser.
 *   registerFastifyWebhook(app, { url: '/webhooks/eds', secret, onEvent })
 */
import { decide, type WebhookHandlerOptions } from './handler.js';

type Done = (error: Error | null, body?: unknown) => void;

/** The slice of a Fastify scope the adapter uses. */
export interface FastifyScopeLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    contentType: string,
    options: { parseAs: 'buffer'; bodyLimit?: number },
    parser: (request: unknown, body: Uint8Array, done: Done) => void,
  ): void;
  post(url: string, handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => unknown): unknown;
}

export interface FastifyRequestLike {
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(payload?: unknown): FastifyReplyLike;
}

/** A Fastify instance, seen through `register` only. */
export interface FastifyLike {
  register(plugin: (scope: FastifyScopeLike, options: Record<string, unknown>) => Promise<void>): unknown;
}

export interface FastifyWebhookOptions extends WebhookHandlerOptions {
  /** Route path, e.g. `/webhooks/eds`. */
  url: string;
  /** Largest accepted body; default Fastify's bodyLimit. */
  bodyLimit?: number;
}

export function registerFastifyWebhook(app: FastifyLike, options: FastifyWebhookOptions): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      'application/json',
      options.bodyLimit === undefined
        ? { parseAs: 'buffer' }
        : { parseAs: 'buffer', bodyLimit: options.bodyLimit },
      (_request, body, done) => done(null, body),
    );
    scope.post(options.url, (request, reply) => {
      const { answer, afterAnswer } = decide(request.body ?? Buffer.alloc(0), request.headers, options);
      if (answer.body) reply.code(answer.status).header('content-type', 'application/json').send(answer.body);
      else reply.code(answer.status).send();
      // Start the work only after the answer is on its way.
      if (afterAnswer) setImmediate(afterAnswer);
      return reply;
    });
  });
}
