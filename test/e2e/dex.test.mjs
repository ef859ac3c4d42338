// The console's OpenID Connect sign-in through a real provider: Dex (DEX_ISSUER, its password
// DB with ann@example.com) and the gateway (SLUICE_URL) whose console.oidc names it, mapping
// Dex's users, who have no groups, to member (default_role) of the team dex-users
// (default_team). TestConsoleDex starts both.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch } from './chromium.mjs';

const base = process.env.SLUICE_URL;
const ADMIN = process.env.SLUICE_ADMIN;
const ISSUER = process.env.DEX_ISSUER;
let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

test('sign in with Dex: its login form, back in the console as a member, the role enforced', async (t) => {
  const context = await browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  // Only the gateway and Dex: nothing else is reached during the sign-in.
  await context.route((u) => !u.href.startsWith(base + '/') && !u.href.startsWith(ISSUER + '/'), (route) => {
    problems.push('a request outside the gateway and Dex: ' + route.request().url());
    return route.abort();
  });

  await page.goto(base + '/console/');
  await page.locator('#sign-in').waitFor({ state: 'visible' });
  await page.getByRole('link', { name: 'Sign in with dex' }).click();

  // Dex's pages: its connector list when it has several (then "Log in with Email"), else
  // straight to the password form.
  await page.waitForURL((u) => u.href.startsWith(ISSUER + '/'));
  const email = page.getByRole('link', { name: /Log in with Email/i }).or(page.getByRole('button', { name: /Log in with Email/i }));
  await Promise.race([page.locator('#login').waitFor(), email.first().waitFor()]);
  if (await email.count()) await email.first().click();
  await page.fill('#login', 'ann@example.com');
  await page.fill('#password', 'ann-password');
  await page.click('#submit-login');

  // Back in the console, signed in: #who names the user and the mapped role.
  await page.waitForURL((u) => u.href.startsWith(base + '/console/'));
  await page.locator('#pages').waitFor({ state: 'visible' });
  await page.locator('#who').filter({ hasText: /\S/ }).waitFor();
  const who = await page.locator('#who').textContent();
  assert.match(who, /^usr_\S+ · member · dex-users$/, `#who: ${who}`);

  // The gateway made the user at this sign-in, from Dex's ID token.
  const users = await (await fetch(base + '/admin/users', { headers: { Authorization: 'Bearer ' + ADMIN } })).json();
  const ann = (users.data || users).find((u) => u.email === 'ann@example.com');
  assert.ok(ann, `no user ann@example.com in ${JSON.stringify(users)}`);
  assert.equal(ann.source, 'oidc');
  assert.equal(ann.role, 'member');
  assert.deepEqual(ann.teams, ['dex-users']);
  assert.equal(who.split(' · ')[0], ann.id);

  // The page's session calls the admin API within the role: a member lists and makes their
  // own keys, in their team only (its budget holds over them); users' management is the
  // admin's (403).
  const call = (method, path, body) => page.evaluate(async ([method, path, body]) => {
    const s = await (await fetch('/console/session')).json();
    const r = await fetch(path, { method, headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf }, body });
    return { status: r.status, body: await r.text() };
  }, [method, path, body]);
  const list = await call('GET', '/admin/keys');
  assert.equal(list.status, 200, list.body);
  const teamless = await call('POST', '/admin/keys', JSON.stringify({ name: 'ann-anywhere', models: ['*'] }));
  assert.equal(teamless.status, 403, teamless.body);
  assert.match(JSON.parse(teamless.body).error.message, /one of your teams \(dex-users\)/);
  const made = await call('POST', '/admin/keys', JSON.stringify({ name: 'ann-laptop', team: 'dex-users' }));
  assert.equal(made.status, 201, made.body);
  assert.equal(JSON.parse(made.body).owner, ann.id);
  assert.equal(JSON.parse(made.body).team, 'dex-users');
  const out = await call('PATCH', '/admin/keys/' + JSON.parse(made.body).id, JSON.stringify({ team: null }));
  assert.equal(out.status, 403, out.body);
  const refused = await call('POST', '/admin/users', JSON.stringify({ email: 'eve@example.com', role: 'admin' }));
  assert.equal(refused.status, 403, refused.body);
  assert.deepEqual(problems, []);
});
