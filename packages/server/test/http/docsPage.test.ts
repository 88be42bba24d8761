/**
 * The API reference page in a real browser (Debian's chromium through playwright-core, headless,
 * no browser download): all five routes, the webhook and the authentication section render, with
 * no console errors, no failed request (the icon included) and no request leaving the machine.
 * A screenshot is kept as a test artifact.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { REASON_CODES, REASONS } from '../../src/contract/reasons.js';
import { launchChromium, openPage, SKIP_WITHOUT_CHROMIUM } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');

let server: TestServer;
before(async () => {
  server = await startTestServer('sqlite');
});
after(() => server.close());

test('happy: /docs/problems lists every reason code of the table with an anchor, status and where it comes from', async () => {
  const r = await fetch(`${server.url}/docs/problems`);
  assert.equal(r.status, 200);
  const html = await r.text();
  for (const code of REASON_CODES) {
    const row = new RegExp(`<tr id="${code}"><td><code>${code}</code></td><td>${REASONS[code].status}</td>`);
    assert.match(html, row, code);
  }
  assert.match(html, /<tr id="link_expired">.*<td>media host<\/td><\/tr>/);
  assert.match(html, /<tr id="service_unavailable">.*<td>every route<\/td><\/tr>/);
  assert.match(html, /<code>message<\/code>/);
  assert.match(html, /<code>field<\/code>/);
});

test('happy: /docs/reference/ serves the reference and its script from this server (no CDN)', async () => {
  const html = await (await fetch(`${server.url}/docs/reference/`)).text();
  assert.doesNotMatch(html, /https?:\/\/(cdn|unpkg|fonts)\./);
  const script = await fetch(`${server.url}/docs/reference/js/scalar.js`);
  assert.equal(script.status, 200);
});

test('happy: the reference has an icon, served by this server', async () => {
  const html = await (await fetch(`${server.url}/docs/reference/`)).text();
  assert.match(
    html,
    /<link[^>]+rel="icon"[^>]+href="\/docs\/favicon.svg"|href="\/docs\/favicon.svg"[^>]+rel="icon"/,
  );
  const icon = await fetch(`${server.url}/docs/favicon.svg`);
  assert.equal(icon.status, 200);
  assert.match(icon.headers.get('content-type') ?? '', /^image\/svg\+xml/);
  assert.match(await icon.text(), /^<svg /);
});

test("error: a path under /docs that the reference does not serve is the service's own 404 problem", async () => {
  const r = await fetch(`${server.url}/docs/nope?x=1`);
  assert.equal(r.status, 404);
  assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = (await r.json()) as { reason_code: string; message: string; detail: string; field: null };
  assert.equal(body.reason_code, 'route_not_found');
  assert.equal(body.message, body.detail);
  assert.equal(body.field, null);
});

test('happy: HEAD on the reference answers the same length as GET, without a body', async () => {
  const get = await fetch(`${server.url}/docs/reference/js/scalar.js`);
  const body = await get.arrayBuffer();
  const head = await fetch(`${server.url}/docs/reference/js/scalar.js`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), String(body.byteLength));
  assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
});

test('happy: the reference renders every route and the authentication section in a real browser', {
  skip: SKIP_WITHOUT_CHROMIUM,
}, async () => {
  const browser = await launchChromium();
  try {
    const page = await openPage(browser, { viewport: { width: 1400, height: 1000 } });
    const consoleErrors: string[] = [];
    const external: string[] = [];
    const failed: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:')
        return route.continue();
      external.push(url.origin);
      return route.abort();
    });
    await page.goto(`${server.url}/docs/reference/`, { waitUntil: 'networkidle' });
    await page.waitForSelector('text=List encounters');
    const documentsGroup = page.getByRole('button', { name: /Open Group - documents/ });
    if (await documentsGroup.count()) await documentsGroup.first().click();
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'api-reference.png'), fullPage: false });
    const text = await page.locator('body').innerText();
    if (process.env.DEBUG_DOCS) console.log(text);
    for (const summary of [
      'List encounters',
      'Get an encounter',
      'Get a document',
      'Get the finalized transcript',
      'short-lived link',
    ]) {
      assert.ok(text.includes(summary), `route "${summary}" is shown`);
    }
    assert.match(text, /Authentication|bearerAuth|Bearer/);
    assert.ok(text.includes('recording.transcript_ready'), 'the webhook is shown beside the routes');
    const icon = await page.locator('link[rel~="icon"]').first().getAttribute('href');
    assert.equal(icon, '/docs/favicon.svg');
    assert.deepEqual(failed, [], 'no request of the page fails (favicon included)');
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual([...new Set(external)], []);
  } finally {
    await browser.close();
  }
});
