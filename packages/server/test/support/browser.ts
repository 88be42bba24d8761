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
 * A page in a context of its own that waits for what it is asked without a limit of its own:
 * chromium renders slowly on a loaded machine, and a hang is named by the test runner's timeout.
 */
export async function openPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(0);
  context.setDefaultNavigationTimeout(0);
  return context.newPage();
}
