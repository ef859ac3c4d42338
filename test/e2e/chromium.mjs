// launch starts the browser tests' Chromium: Debian's (CHROMIUM), headless, quiet.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    timeout: 30_000,
  });
}

// guarded opens a page in a fresh context of browser (no cookie, no storage) that fails test
// t when it ends if the page made a request outside base, threw a script error, broke the
// CSP or Trusted Types, or opened a dialog (alert(1) would be one); page.problems lists them.
export async function guarded(browser, t, base, viewport) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Trusted Type/i.test(m.text())) problems.push('CSP: ' + m.text());
  });
  page.on('dialog', (d) => {
    problems.push('a dialog: ' + d.message());
    return d.dismiss();
  });
  await context.route((u) => !u.href.startsWith(base + '/'), (route) => {
    problems.push('a request outside the gateway: ' + route.request().url());
    return route.abort();
  });
  t.after(async () => {
    await context.close();
    assert.deepEqual(problems, []);
  });
  page.problems = problems;
  return page;
}
