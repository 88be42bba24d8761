/**
 * The API reference at /docs/reference/: Scalar's renderer over the served OpenAPI document, its
 * script served by this process (no CDN, works offline); /docs/problems, the reason-code table
 * that every problem's `type` points at, generated from contract/reasons.ts; and the guides with
 * the /docs entry page (http/guides.ts).
 *
 * Scalar's plugin holds its 4 MB script in memory (about 25 MB of heap once loaded). An API
 * process that nobody browses should not pay that, so the renderer lives in a small Fastify
 * instance of its own, built at the first /docs request, and /docs requests are passed to it.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { REASON_CODES, REASONS, type ReasonCode } from '../contract/reasons.js';
import { DOCS_ICON_SVG } from './docsIcon.js';
import { REFERENCE_PATH, REFERENCE_PREFIX, registerGuides } from './guides.js';
import { OPENAPI_PATH } from './openapi.js';
import { NO_ROUTE } from './problem.js';

export const DOCS_PREFIX = '/docs';
export const DOCS_ICON_PATH = `${DOCS_PREFIX}/favicon.svg`;

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** Where a code can come from, for the problem table. */
function answeredBy(code: ReasonCode): string {
  const { routes, hosts } = REASONS[code];
  const api = routes === 'all' ? 'every route' : routes === 'none' ? 'other paths' : routes.join(', ');
  return { api, media: 'media host', both: `${api}; media host` }[hosts];
}

function problemsPage(): string {
  const rows = REASON_CODES.map(
    (code) =>
      `<tr id="${code}"><td><code>${code}</code></td><td>${REASONS[code].status}</td><td>${escapeHtml(REASONS[code].title)}</td><td>${escapeHtml(answeredBy(code))}</td></tr>`,
  ).join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Problem types · Encounter Data Service</title><link rel="icon" type="image/svg+xml" href="${DOCS_ICON_PATH}">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}td,th{padding:.3rem .8rem;text-align:left;border-bottom:1px solid #ddd}:target{background:#fff6bf}</style>
</head><body><h1>Problem types</h1><p>Every error is <code>application/problem+json</code> (RFC 9457) with a
<code>reason_code</code>. Branch on <code>reason_code</code>, not on the text. See the <a href="${REFERENCE_PATH}">API reference</a>.</p>
<p>Besides <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>reason_code</code>
and <code>request_id</code>, every problem carries <code>message</code> (the same sentence as <code>detail</code>) and
<code>field</code>: the query parameter that decided the code (<code>limit</code>, <code>offset</code>,
<code>sort_order</code>, <code>start_at</code>, <code>end_at</code>, or for <code>unsupported_filter</code> the first
unsupported key as you sent it), or <code>null</code> when no single parameter applies (<code>start_at</code> not
before <code>end_at</code>, authentication, lookups).</p>
<p>The media host that serves signed audio links answers its refusals in the same shape, with the codes marked
“media host” below; it never answers with an API key's code.</p>
<table><thead><tr><th>reason_code</th><th>HTTP</th><th>Meaning</th><th>Answered by</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2 id="rate-limits">Rate limits</h2><p>Each API key has a token bucket. Every answer to a request
whose key was identified, errors included, carries <code>RateLimit-Policy: "key";q=&lt;burst&gt;;w=&lt;seconds&gt;</code>
and <code>RateLimit: "key";r=&lt;requests left&gt;;t=&lt;seconds until full&gt;</code> (draft-ietf-httpapi-ratelimit-headers),
so a client can pace itself. Over the limit the answer is <code>429</code> <code>rate_limited</code> with
<code>Retry-After</code> in whole seconds (at least 1): wait that long, then retry. A 429 is sent when the
request could have succeeded (the bucket's next token; by default at most a second after it arrived), so a client that
retries at once is paced to its limit. Requests without a valid key
share a budget per client address and get the same 429 when they exceed it.</p></body></html>`;
}

async function buildReferenceApp(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const reference = Fastify({ logger: false });
  await reference.register(scalar, {
    routePrefix: REFERENCE_PREFIX,
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

/** The renderer's page names no icon (browsers would then ask for a /favicon.ico that 404s). */
function withIcon(payload: Buffer, headers: Record<string, string | string[]>): Buffer {
  if (!String(headers['content-type'] ?? '').startsWith('text/html')) return payload;
  const html = payload.toString('utf8');
  if (html.includes('rel="icon"')) return payload;
  const link = `<link rel="icon" type="image/svg+xml" href="${DOCS_ICON_PATH}" />`;
  return Buffer.from(html.replace('<head>', `<head>\n    ${link}`), 'utf8');
}

/** Hop-by-hop and length headers belong to each connection, not to the forwarded answer. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

interface ReferenceAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  payload: Buffer;
}

export async function registerDocs(app: FastifyInstance): Promise<void> {
  let reference: Promise<FastifyInstance> | undefined;
  // The reference's answers are static: each path's is asked for once and kept (paths only, so
  // query strings cannot grow the cache; a path Scalar does not serve is never kept).
  const answers = new Map<string, ReferenceAnswer>();

  const ask = async (path: string): Promise<ReferenceAnswer> => {
    const known = answers.get(path);
    if (known) return known;
    reference ??= buildReferenceApp().catch((error: unknown) => {
      reference = undefined;
      throw error;
    });
    const answer = await (await reference).inject({ method: 'GET', url: path });
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value as string | string[];
    }
    const kept = { status: answer.statusCode, headers, payload: withIcon(answer.rawPayload, headers) };
    if (kept.status < 400) answers.set(path, kept);
    return kept;
  };

  // GET only: Fastify answers HEAD from it, with the same headers and length and no body.
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = await ask(request.url.split('?')[0]!);
    if (answer.status === 404) throw NO_ROUTE;
    if (answer.status >= 400) throw new Error(`API reference answered ${answer.status}`);
    reply.code(answer.status).headers(answer.headers);
    return answer.payload.length > 0 ? reply.send(answer.payload) : reply.send();
  };
  for (const url of [REFERENCE_PREFIX, `${REFERENCE_PATH}*`]) {
    app.get(url, { schema: { hide: true }, logLevel: 'silent' }, forward);
  }
  app.addHook('onClose', async () => {
    if (reference) await (await reference.catch(() => undefined))?.close();
  });
  // A static route outranks the `/docs/*` wildcard, so the icon never reaches the renderer.
  app.get(DOCS_ICON_PATH, { schema: { hide: true }, logLevel: 'silent' }, async (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(DOCS_ICON_SVG),
  );
  registerGuides(app);
  const page = problemsPage();
  app.get(`${DOCS_PREFIX}/problems`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(page),
  );
}
