/**
 * The API reference at /docs: Scalar's renderer over the served OpenAPI document, its script
 * served by this process (no CDN, works offline); and /docs/problems, the reason-code table that
 * every problem's `type` points at, generated from contract/reasons.ts.
 */
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { REASON_CODES, REASONS } from '../contract/reasons.js';

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

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(scalar, {
    routePrefix: DOCS_PREFIX,
    logLevel: 'silent',
    configuration: {
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
  const page = problemsPage();
  app.get(`${DOCS_PREFIX}/problems`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(page),
  );
}
