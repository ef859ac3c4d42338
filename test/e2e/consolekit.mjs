// What the console's browser tests share (console.test.mjs, console-roles.test.mjs): the
// gateway TestConsole started (SLUICE_URL, SLUICE_ADMIN), the browser, and helpers that
// call the gateway or open the console in a fresh context that fails the test on any
// request outside the gateway, script error, CSP or Trusted Types violation, or dialog.
import assert from 'node:assert/strict';
import path from 'node:path';
import { launch, guarded } from './chromium.mjs';

export const base = process.env.SLUICE_URL;
export const ADMIN = process.env.SLUICE_ADMIN;
const SHOTS = process.env.SLUICE_SHOTS || '';
let browser;

export async function start() {
  browser = await launch();
}

export async function stop() {
  await browser?.close();
}

// admin calls the admin API with the admin token.
export const admin = (p, init = {}) => fetch(base + p, { ...init, headers: { Authorization: 'Bearer ' + ADMIN, 'Content-Type': 'application/json', ...init.headers } });

// newKey creates a key with the admin API and returns its secret and id.
export async function newKey(body) {
  const r = await admin('/admin/keys', { method: 'POST', body: JSON.stringify(body) });
  assert.equal(r.status, 201);
  const k = await r.json();
  return { secret: k.key, id: k.id };
}

// chat makes one chat completion with key; id is the X-Request-Id the client got.
export async function chat(key, model, content) {
  const r = await fetch(base + '/v1/chat/completions', {
    method: 'POST', headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  await r.text();
  return { status: r.status, id: r.headers.get('x-request-id') };
}

// logged waits for the request log to hold request id (its writer batches).
export async function logged(id) {
  for (let i = 0; i < 100; i++) {
    const r = await admin('/admin/logs/' + encodeURIComponent(id));
    if (r.ok) return r.json();
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.fail(`request ${id} never reached the log`);
}

export async function shot(page, name) {
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, name), fullPage: true });
}

// open loads the console in a fresh, guarded page (chromium.mjs) and, unless signIn is false,
// signs in with token (the admin token by default; a user's personal token signs in as
// them).
export async function open(t, { width = 1280, height = 860, signIn = true, hash = '', token = ADMIN } = {}) {
  const page = await guarded(browser, t, base, { width, height });
  await page.goto(base + '/console/' + hash);
  if (signIn) {
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    await page.fill('#token', token);
    await page.press('#token', 'Enter');
    await page.locator('#pages').waitFor({ state: 'visible' });
  }
  return page;
}

// session is the page's session cookie, as itself and as a Cookie header, and its CSRF token.
export async function session(page) {
  const [c] = (await page.context().cookies(base)).filter((c) => c.name.includes('sluice_console'));
  const header = `${c.name}=${c.value}`;
  const s = await (await fetch(base + '/console/session', { headers: { Cookie: header } })).json();
  return { cookie: c, header, csrf: s.csrf };
}
