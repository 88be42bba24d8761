/**
 * The partner guides at /docs/guides/<name>, and /docs itself: an entry page that links the API
 * reference, the problem table and every guide with plain links (no script needed). The guides
 * are the markdown files in packages/server/guides and the repository's CHANGELOG.md, rendered
 * once at start-up; raw HTML in them is shown as text, never passed through.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { Marked, type Tokens } from 'marked';

export const DOCS_HOME = '/docs';
/** Scalar's reference: it serves its page at the prefix with a trailing slash. */
export const REFERENCE_PREFIX = '/docs/reference';
export const REFERENCE_PATH = `${REFERENCE_PREFIX}/`;
export const PROBLEMS_PATH = '/docs/problems';
export const GUIDES_PREFIX = '/docs/guides';
const ICON_PATH = '/docs/favicon.svg';

interface Guide {
  /** Its URL is /docs/guides/<slug>; its source, guides/<slug>.md (or the changelog). */
  readonly slug: string;
  readonly title: string;
  readonly summary: string;
  readonly source: URL;
}

const GUIDES_DIR = new URL('../../guides/', import.meta.url);
const guide = (slug: string, title: string, summary: string, source = new URL(`${slug}.md`, GUIDES_DIR)) => ({
  slug,
  title,
  summary,
  source,
});

/** In reading order. */
export const GUIDES: readonly Guide[] = [
  guide(
    'getting-started',
    'Getting started',
    'A first call in the sandbox, then a typed client generated from the API description.',
  ),
  guide('environments', 'Environments and keys', 'Live and sandbox deployments, key formats, rotation.'),
  guide(
    'authentication',
    'Authentication and scopes',
    'The bearer key, the order of checks, scopes and route groups.',
  ),
  guide('errors', 'Errors', 'The problem body and what to do for each status and reason code.'),
  guide(
    'pagination',
    'Pagination and incremental sync',
    'Windows over created_at, offsets, ETags and Link headers.',
  ),
  guide(
    'transcripts-and-audio',
    'Transcripts and audio links',
    'Document details, finalized transcripts and short-lived recording links.',
  ),
  guide(
    'webhooks',
    'Receiving and verifying webhooks',
    'Signatures, retries, deduplication and secret rotation.',
  ),
  guide('rate-limits', 'Rate limits', 'Per-key budgets, the RateLimit fields and 429.'),
  guide(
    'compatibility',
    'Compatibility and deprecation',
    'What never changes in v1, and how a route is retired.',
  ),
  guide(
    'changelog',
    'Changelog',
    'Every change a partner can see, newest first.',
    new URL('../../../CHANGELOG.md', GUIDES_DIR),
  ),
];

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** `errors.md#x` → `/docs/guides/errors#x`, so the files link each other on disk and served alike. */
function servedHref(href: string): string {
  const match = /^(?:\.\/)?(?:(?:\.\.\/)+)?([a-z-]+|CHANGELOG)\.md(#.*)?$/.exec(href);
  if (!match) return href;
  const slug = match[1] === 'CHANGELOG' ? 'changelog' : match[1]!;
  return `${GUIDES_PREFIX}/${slug}${match[2] ?? ''}`;
}

const headingId = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/&[a-z0-9#]+;/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** Markdown to HTML: headings get ids for anchors, links between guides are rewritten, raw HTML escaped. */
export function renderMarkdown(markdown: string): string {
  const marked = new Marked({
    gfm: true,
    walkTokens(token) {
      if (token.type === 'link') (token as Tokens.Link).href = servedHref((token as Tokens.Link).href);
    },
    renderer: {
      html({ text }) {
        return escapeHtml(text);
      },
      heading({ tokens, depth }) {
        const inner = this.parser.parseInline(tokens);
        return `<h${depth} id="${headingId(inner)}">${inner}</h${depth}>\n`;
      },
    },
  });
  return marked.parse(markdown, { async: false });
}

const STYLE = `body{font:16px/1.55 system-ui,sans-serif;margin:0;color:#1d2430}
.wrap{display:flex;gap:2.5rem;max-width:72rem;margin:0 auto;padding:1.5rem}
nav{flex:0 0 15rem;font-size:15px}nav ul{list-style:none;padding:0}nav li{margin:.35rem 0}
main{flex:1;min-width:0}a{color:#0b5cad}code{background:#f2f4f7;padding:.05rem .3rem;border-radius:3px}
pre{background:#f2f4f7;padding:.8rem;overflow-x:auto}pre code{padding:0}
table{border-collapse:collapse}td,th{padding:.3rem .7rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
[aria-current=page]{font-weight:600}`;

function layout(title: string, current: string, body: string): string {
  const link = (href: string, text: string) =>
    `<a href="${href}"${href === current ? ' aria-current="page"' : ''}>${escapeHtml(text)}</a>`;
  const nav = [
    `<li>${link(DOCS_HOME, 'Overview')}</li>`,
    `<li>${link(REFERENCE_PATH, 'API reference')}</li>`,
    `<li>${link(PROBLEMS_PATH, 'Problem types')}</li>`,
    ...GUIDES.map((g) => `<li>${link(`${GUIDES_PREFIX}/${g.slug}`, g.title)}</li>`),
  ].join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Encounter Data Service</title>
<link rel="icon" type="image/svg+xml" href="${ICON_PATH}"><style>${STYLE}</style></head>
<body><div class="wrap"><nav aria-label="Documentation"><ul>${nav}</ul></nav><main>
${body}
</main></div></body></html>`;
}

function homePage(): string {
  const guides = GUIDES.map(
    (g) =>
      `<li><a href="${GUIDES_PREFIX}/${g.slug}">${escapeHtml(g.title)}</a>: ${escapeHtml(g.summary)}</li>`,
  ).join('\n');
  return layout(
    'Documentation',
    DOCS_HOME,
    `<h1>Encounter Data Service documentation</h1>
<p>Read-only access for approved partner organizations to their clinical encounters, documents,
finalized ambient transcripts and short-lived audio links, with a signed webhook when a transcript is ready.</p>
<ul>
<li><a href="${REFERENCE_PATH}">API reference</a>: every route, parameter, answer and header (the OpenAPI 3.1 description is at <a href="/openapi/v1/openapi.json">/openapi/v1/openapi.json</a>).</li>
<li><a href="${PROBLEMS_PATH}">Problem types</a>: every <code>reason_code</code> with its HTTP status.</li>
</ul>
<h2>Guides</h2>
<ul>
${guides}
</ul>`,
  );
}

/** Every page, rendered once: path → HTML. */
export function docsPages(): Map<string, string> {
  const pages = new Map<string, string>([[DOCS_HOME, homePage()]]);
  for (const g of GUIDES) {
    const path = `${GUIDES_PREFIX}/${g.slug}`;
    pages.set(path, layout(g.title, path, renderMarkdown(readFileSync(g.source, 'utf8'))));
  }
  return pages;
}

export function registerGuides(app: FastifyInstance): void {
  const pages = docsPages();
  for (const [path, html] of pages) {
    const urls = path === DOCS_HOME ? [DOCS_HOME, `${DOCS_HOME}/`] : [path];
    for (const url of urls) {
      app.get(url, { schema: { hide: true }, logLevel: 'silent' }, async (_request, reply) =>
        reply.type('text/html; charset=utf-8').send(html),
      );
    }
  }
}
