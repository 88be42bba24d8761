/**
 * The partner documentation at /docs: an entry page with plain links to the reference, the
 * problem table and every guide, each guide at a URL of its own, rendered from the repository's
 * markdown with raw HTML shown as text. In a real browser (Debian's chromium through
 * playwright-core, skipped when it is absent), every page reachable from /docs is walked with
 * scripts off, as a partner without JavaScript would: no link answers 404, no request fails and
 * nothing is logged to the console.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { GUIDES, renderMarkdown } from '../../src/http/guides.js';
import { launchChromium, openPage, SKIP_WITHOUT_CHROMIUM } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer('sqlite');
});
after(() => server.close());

const hrefsOf = (html: string) => [...html.matchAll(/<a [^>]*href="([^"]+)"/g)].map((m) => m[1]!);

test('happy: /docs is an HTML page that links the reference, the problem table and every guide', async () => {
  for (const path of ['/docs', '/docs/']) {
    const r = await fetch(`${server.url}${path}`, { redirect: 'manual' });
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
    const links = hrefsOf(await r.text());
    for (const target of [
      '/docs/reference/',
      '/docs/problems',
      ...GUIDES.map((g) => `/docs/guides/${g.slug}`),
    ]) {
      assert.ok(links.includes(target), `${path} links ${target}`);
    }
  }
});

test('happy: each guide has its own page, titled, with the documentation links beside it', async () => {
  for (const guide of GUIDES) {
    const r = await fetch(`${server.url}/docs/guides/${guide.slug}`);
    assert.equal(r.status, 200, guide.slug);
    const html = await r.text();
    assert.match(html, new RegExp(`<title>${guide.title} · Encounter Data Service</title>`));
    assert.match(html, /<h1 id="[a-z-]+">/, `${guide.slug} has a heading`);
    assert.ok(hrefsOf(html).includes('/docs'), `${guide.slug} links back to /docs`);
  }
});

test('happy: the changelog page is the repository’s CHANGELOG.md, newest first', async () => {
  const html = await (await fetch(`${server.url}/docs/guides/changelog`)).text();
  const dates = [...html.matchAll(/<h2 id="[^"]*">[^<]*?(\d{4}-\d{2}-\d{2})/g)].map((m) => m[1]!);
  assert.ok(dates.length >= 3, dates.join());
  assert.deepEqual(dates, [...dates].sort().reverse());
});

test('happy: links between guides written for the repository lead to the served pages', () => {
  const html = renderMarkdown(
    'See [errors](errors.md#retrying-safely) and [the log](../../../CHANGELOG.md).',
  );
  assert.match(html, /href="\/docs\/guides\/errors#retrying-safely"/);
  assert.match(html, /href="\/docs\/guides\/changelog"/);
});

test('error: raw HTML in a guide is shown as text, never run', () => {
  const html = renderMarkdown('Before <script>alert(1)</script> after\n\n<img src=x onerror="alert(1)">\n');
  assert.doesNotMatch(html, /<script|<img/);
  assert.match(html, /&lt;script&gt;/);
});

test('error: a guide that does not exist is the service’s own 404 problem', async () => {
  const r = await fetch(`${server.url}/docs/guides/nope`);
  assert.equal(r.status, 404);
  assert.equal(((await r.json()) as { reason_code: string }).reason_code, 'route_not_found');
});

test('happy: every page and link reachable from /docs works in a real browser without JavaScript', {
  skip: SKIP_WITHOUT_CHROMIUM,
}, async () => {
  const browser = await launchChromium();
  try {
    const page = await openPage(browser, { javaScriptEnabled: false });
    const problems: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
    // A request cut short because the walk moved on to the next page is not a failure.
    page.on('requestfailed', (r) => {
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed ${r.url()}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
    );

    const origin = new URL(server.url).origin;
    const visited = new Set<string>();
    const queue = ['/docs'];
    while (queue.length > 0) {
      const path = queue.shift()!;
      if (visited.has(path)) continue;
      visited.add(path);
      const answer = await page.goto(`${origin}${path}`, { waitUntil: 'load' });
      assert.ok(answer, path);
      assert.equal(answer.status(), 200, path);
      // Follow the documentation's own pages; the reference (a script app) and the OpenAPI file are
      // checked as links only.
      if (
        !(answer.headers()['content-type'] ?? '').startsWith('text/html') ||
        path.startsWith('/docs/reference')
      ) {
        continue;
      }
      for (const href of await page
        .locator('a[href]')
        .evaluateAll((as) => as.map((a) => a.getAttribute('href')!))) {
        const url = new URL(href, `${origin}${path}`);
        assert.equal(url.origin, origin, `${path} links only within the service: ${href}`);
        if (url.hash && url.pathname === path) {
          const id = decodeURIComponent(url.hash.slice(1));
          assert.equal(await page.locator(`[id="${id}"]`).count(), 1, `${path} has the anchor ${url.hash}`);
          continue;
        }
        queue.push(url.pathname);
      }
    }
    for (const guide of GUIDES) assert.ok(visited.has(`/docs/guides/${guide.slug}`), guide.slug);
    assert.ok(
      visited.has('/docs/reference/') &&
        visited.has('/docs/problems') &&
        visited.has('/openapi/v1/openapi.json'),
    );
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
