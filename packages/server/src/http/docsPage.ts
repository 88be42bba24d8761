/**
 * The API reference at /docs: Scalar's renderer over the served OpenAPI document, its script
 * served by this process (no CDN, works offline); and /docs/problems, the reason-code table that
 * every problem's `type` points at, generated from contract/reasons.ts.
 *
 * Scalar's plugin holds its 4 MB script in memory (about 25 MB of heap once loaded). An API
 * process that nobody browses should not pay that, so the renderer lives in a small Fastify
 * instance of its own, built at the first /docs request, and /docs requests are passed to it.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { REASON_CODES, REASONS } from '../contract/reasons.js';
import { OPENAPI_PATH } from './openapi.js';

export const DOCS_PREFIX = '/docs';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

function problemsPage(): string {
  const rows = REASON_CODES.map(
    (code) =>
      `<tr id="${code}"><td><code>${code}</code></td><td>${REASONS[code].status}</td><td>${escapeHtml(REASONS[code].title)}</td></tr>`,
  ).join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Problem types · Encounter Data Service</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}td,th{padding:.3rem .8rem;text-align:left;border-bottom:1px solid #ddd}:target{background:#fff6bf}</style>
</head><body><h1>Problem types</h1><p>Every error is <code>application/problem+json</code> (RFC 9457) with a
<code>reason_code</code>. Branch on <code>reason_code</code>, not on the text. See the <a href="${DOCS_PREFIX}">API reference</a>.</p>
<table><thead><tr><th>reason_code</th><th>HTTP</th><th>Meaning</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

async function buildReferenceApp(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const reference = Fastify({ logger: false });
  await reference.register(scalar, {
    routePrefix: DOCS_PREFIX,
    configuration: {
      url: OPENAPI_PATH,
      pageTitle: 'Encounter Data Service API',
      withDefaultFonts: false,
      hideClientButton: true,
      telemetry: false,
      // A clinical API's reference stays a reference: no AI agent, MCP or hosted developer tools.
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
      defaultOpenAllTags: true,
    } as Record<string, unknown>,
  });
  await reference.ready();
  return reference;
}

/** Hop-by-hop and length headers belong to each connection, not to the forwarded answer. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

export async function registerDocs(app: FastifyInstance): Promise<void> {
  let reference: Promise<FastifyInstance> | undefined;
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    reference ??= buildReferenceApp().catch((error: unknown) => {
      reference = undefined;
      throw error;
    });
    const answer = await (await reference).inject({
      method: request.method as 'GET' | 'HEAD',
      url: request.url,
      headers: request.headers,
    });
    reply.code(answer.statusCode);
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !NOT_FORWARDED.has(name)) reply.header(name, value);
    }
    return reply.send(answer.rawPayload);
  };
  for (const url of [DOCS_PREFIX, `${DOCS_PREFIX}/*`]) {
    app.route({ method: ['GET', 'HEAD'], url, schema: { hide: true }, logLevel: 'silent', handler: forward });
  }
  app.addHook('onClose', async () => {
    if (reference) await (await reference.catch(() => undefined))?.close();
  });
  const page = problemsPage();
  app.get(`${DOCS_PREFIX}/problems`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(page),
  );
}
