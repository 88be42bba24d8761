/**
 * Debian's chromium, driven headless by playwright-core (which never downloads a browser). Tests
 * that need it are skipped, with SKIP_WITHOUT_CHROMIUM as the reason, where it is not installed.
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
export const SKIP_WITHOUT_CHROMIUM = CHROMIUM
  ? false
  : 'Debian chromium is not installed (.ci/run installs it)';

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Far beyond what a page here takes, even on a loaded machine (one drew the reference after more
 * than 20 s),
 * and still short of the test runner's limit, so a step that hangs fails with its own name.
 */
const PAGE_STEP_LIMIT_MS = 300_000;

/** A page in a context of its own, each of its steps allowed PAGE_STEP_LIMIT_MS. */
export async function openPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(PAGE_STEP_LIMIT_MS);
  context.setDefaultNavigationTimeout(PAGE_STEP_LIMIT_MS);
  return context.newPage();
}
