// The console's OpenID Connect sign-in through a real provider: Dex (DEX_ISSUER, its password
// DB) and the gateway (SLUICE_URL) whose console.oidc names it. ann@example.com is in Dex's
// group search, which roles maps to team_admin of the team search; bob@example.com is in no
// group and signs in by default_role as a member of default_team dex-users. TestConsoleDex
// starts both.
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

// signIn signs in to the console as email through Dex's own login form, in a context of its
// own, and returns the page, the console's #who, the user the gateway made or updated, a call
// of the admin API in the page's session, and the problems met (requests outside the gateway
// and Dex, page errors).
async function signIn(t, email, password) {
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
  const byEmail = page.getByRole('link', { name: /Log in with Email/i }).or(page.getByRole('button', { name: /Log in with Email/i }));
  await Promise.race([page.locator('#login').waitFor(), byEmail.first().waitFor()]);
  if (await byEmail.count()) await byEmail.first().click();
  await page.fill('#login', email);
  await page.fill('#password', password);
  await page.click('#submit-login');

  // Back in the console, signed in: #who names the user, the mapped role and teams.
  await page.waitForURL((u) => u.href.startsWith(base + '/console/'));
  await page.locator('#pages').waitFor({ state: 'visible' });
  await page.locator('#who').filter({ hasText: /\S/ }).waitFor();
  const who = await page.locator('#who').textContent();

  // The gateway made the user at this sign-in, from Dex's ID token.
  const users = await (await fetch(base + '/admin/users', { headers: { Authorization: 'Bearer ' + ADMIN } })).json();
  const user = (users.data || users).find((u) => u.email === email);
  assert.ok(user, `no user ${email} in ${JSON.stringify(users)}`);
  assert.equal(user.source, 'oidc');
  assert.equal(who.split(' · ')[0], user.id);

  const call = (method, path, body) => page.evaluate(async ([method, path, body]) => {
    const s = await (await fetch('/console/session')).json();
    const r = await fetch(path, { method, headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf }, body });
    return { status: r.status, body: await r.text() };
  }, [method, path, body]);
  return { who, user, call, problems };
}

test("sign in with Dex: its login form, the user's Dex group mapped to team_admin of search", async (t) => {
  const { who, user, call, problems } = await signIn(t, 'ann@example.com', 'ann-password');
  assert.match(who, /^usr_\S+ · team_admin · search$/, `#who: ${who}`);
  assert.equal(user.role, 'team_admin');
  assert.deepEqual(user.teams, ['search']);

  // The page's session calls the admin API within the role: a team_admin sees their team
  // only and makes keys in it, never outside teams nor in another team; users' management
  // is the admin's (403).
  const teams = await call('GET', '/admin/teams');
  assert.equal(teams.status, 200, teams.body);
  assert.deepEqual(JSON.parse(teams.body).data.map((x) => x.name), ['search']);
  const teamless = await call('POST', '/admin/keys', JSON.stringify({ name: 'ann-anywhere', models: ['*'] }));
  assert.equal(teamless.status, 403, teamless.body);
  assert.match(JSON.parse(teamless.body).error.message, /one of your teams \(search\)/);
  const elsewhere = await call('POST', '/admin/keys', JSON.stringify({ name: 'ann-elsewhere', team: 'dex-users' }));
  assert.equal(elsewhere.status, 403, elsewhere.body);
  const made = await call('POST', '/admin/keys', JSON.stringify({ name: 'search-ci', team: 'search' }));
  assert.equal(made.status, 201, made.body);
  assert.equal(JSON.parse(made.body).owner, user.id);
  assert.equal(JSON.parse(made.body).team, 'search');
  const out = await call('PATCH', '/admin/keys/' + JSON.parse(made.body).id, JSON.stringify({ team: null }));
  assert.equal(out.status, 403, out.body);
  const refused = await call('POST', '/admin/users', JSON.stringify({ email: 'eve@example.com', role: 'admin' }));
  assert.equal(refused.status, 403, refused.body);
  assert.deepEqual(problems, []);
});

test('sign in with Dex: a user in no mapped group is a member of dex-users (default_role, default_team)', async (t) => {
  const { who, user, call, problems } = await signIn(t, 'bob@example.com', 'bob-password');
  assert.match(who, /^usr_\S+ · member · dex-users$/, `#who: ${who}`);
  assert.equal(user.role, 'member');
  assert.deepEqual(user.teams, ['dex-users']);

  // A member makes their own keys, in their team only; no team routes.
  const teamless = await call('POST', '/admin/keys', JSON.stringify({ name: 'bob-anywhere', models: ['*'] }));
  assert.equal(teamless.status, 403, teamless.body);
  assert.match(JSON.parse(teamless.body).error.message, /one of your teams \(dex-users\)/);
  const made = await call('POST', '/admin/keys', JSON.stringify({ name: 'bob-laptop', team: 'dex-users' }));
  assert.equal(made.status, 201, made.body);
  assert.equal(JSON.parse(made.body).owner, user.id);
  const teams = await call('GET', '/admin/teams');
  assert.equal(teams.status, 403, teams.body);
  assert.deepEqual(problems, []);
});
