// The console for a role other than admin (issue 37), in Chromium: a team_admin signs in
// with their personal token and works in their team only. TestConsole runs this file beside
// console.test.mjs, against the same gateway; the admin API (admin token) sets the scene:
// two teams, the team_admin of one, a key of the other that has served a request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { base, start, stop, admin, newKey, chat, logged, shot, open, session } from './consolekit.mjs';

const RED = 'e2e-red'; // the team_admin's
const BLUE = 'e2e-blue'; // another team's
let user;
let token;
let viewer; // a viewer of BLUE, and their token
let blue;

// made calls the admin API and returns the answer's body, asserting its status.
async function made(path, body, status = 201) {
  const r = await admin(path, { method: 'POST', body: JSON.stringify(body) });
  const b = await r.json();
  assert.equal(r.status, status, `POST ${path}: ${JSON.stringify(b)}`);
  return b;
}

// onlyTeam opens the Teams page and checks it lists name alone, with its spend read (a
// figure, not '—': GET /admin/usage answered the caller).
async function onlyTeam(page, name) {
  await page.click('#tab-teams');
  const teams = page.locator('#team-table tbody tr');
  await teams.filter({ hasText: name }).waitFor();
  assert.deepEqual(await teams.locator('th').allTextContents(), [name]);
  assert.match(await teams.first().locator('td').nth(2).textContent(), /^\$/, 'today\'s spend, read');
}

before(async () => {
  for (const name of [RED, BLUE]) await made('/admin/teams', { name, models: ['*'] });
  user = await made('/admin/users', { email: 'ann@example.com', role: 'team_admin', teams: [RED] });
  token = (await made(`/admin/users/${user.id}/tokens`, { name: 'console e2e' })).token;
  assert.match(token, /^sk-sluice-user-/);
  const v = await made('/admin/users', { email: 'vic@example.com', role: 'viewer', teams: [BLUE] });
  viewer = { ...v, token: (await made(`/admin/users/${v.id}/tokens`, { name: 'console e2e' })).token };
  blue = await newKey({ name: 'blue-bot', models: ['*'], team: BLUE });
  const r = await chat(blue.secret, 'sim/echo', 'A request of the blue team.');
  assert.equal(r.status, 200);
  await logged(r.id);
  await start();
});

after(async () => {
  await stop();
  const { data } = await (await admin('/admin/keys')).json();
  for (const k of data.filter((k) => k.team === RED || k.team === BLUE)) await admin('/admin/keys/' + k.id, { method: 'DELETE' });
  for (const u of [user, viewer]) if (u) await admin('/admin/users/' + u.id, { method: 'DELETE' });
  for (const name of [RED, BLUE]) await admin('/admin/teams/' + name, { method: 'DELETE' });
});

test('a team_admin: creates a key into their team, sees their team\'s usage and logs, not another team\'s', async (t) => {
  const page = await open(t, { hash: '#keys', token });
  assert.equal(await page.locator('#who').textContent(), `${user.id} · team_admin · ${RED}`);
  await page.locator('#key-note').filter({ hasText: /keys?\./ }).waitFor();
  assert.equal(await page.locator('#key-table tbody tr', { hasText: 'blue-bot' }).count(), 0, 'another team\'s key is not listed');

  // The key form: their one team, required and chosen; the request log's capture.
  await page.click('#key-new');
  const team = page.locator('#key-form [name=team]');
  assert.deepEqual(await team.locator('option').allTextContents(), [RED]);
  assert.equal(await team.inputValue(), RED);
  assert.equal(await team.evaluate((el) => el.required), true);
  await page.fill('#key-form [name=name]', 'red-bot');
  await page.selectOption('#key-form [name=capture]', 'content');
  await page.click('#key-save');
  const secret = (await page.locator('#key-secret-value').textContent()).trim();
  assert.match(secret, /^sk-sluice-/);
  await page.click('#key-secret button:has-text("I have saved it")');
  const row = page.locator('#key-table tbody tr', { hasText: 'red-bot' });
  await row.waitFor();
  assert.equal((await row.locator('td').nth(1).textContent()), RED);
  const { data } = await (await admin('/admin/keys')).json();
  const red = data.find((k) => k.name === 'red-bot');
  assert.equal(red.team, RED);
  assert.equal(red.capture, 'content');
  assert.equal(red.owner, user.id);
  const used = await chat(secret, 'sim/echo', 'A request of the red team.');
  assert.equal(used.status, 200);
  await logged(used.id);
  await shot(page, 'fixture-keys-team-admin.png');

  // Usage: their team's key, from the request log and the account, never the other's.
  await page.click('#tab-usage');
  const usage = page.locator('#usage-table tbody tr');
  await usage.filter({ hasText: 'red-bot' }).waitFor();
  assert.equal(await usage.filter({ hasText: 'blue-bot' }).count(), 0, 'another team\'s usage is not shown');
  assert.equal(await usage.filter({ hasText: blue.id }).count(), 0);
  assert.match(await page.locator('#usage-note').textContent(), /UTC days/);
  await page.selectOption('#usage-form [name=group]', 'team');
  await page.click('#usage-form button[type=submit]');
  await page.locator('#usage-caption', { hasText: 'Per team' }).waitFor();
  await usage.filter({ hasText: RED }).waitFor();
  assert.deepEqual(await usage.locator('th').allTextContents(), [RED]);
  await shot(page, 'fixture-usage-team-admin.png');

  await onlyTeam(page, RED);

  // Logs: the team column; filtered to the other team, nothing.
  await page.click('#tab-logs');
  const logRow = page.locator(`#log-table tbody tr[data-id="${used.id}"]`);
  await logRow.waitFor();
  assert.equal(await logRow.locator('td').nth(3).textContent(), RED);
  await page.fill('#log-filters [name=team]', BLUE);
  await page.click('#log-filters button[type=submit]');
  await page.locator('#log-table tbody tr.empty').waitFor();

  // Another team's key and usage, by the session: 404, as what does not exist.
  const { header } = await session(page);
  const as = (p) => fetch(base + p, { headers: { Cookie: header } });
  assert.equal((await as('/admin/keys/' + blue.id)).status, 404);
  assert.equal((await as('/admin/keys/' + red.id)).status, 200);
  assert.equal((await as('/admin/usage?team=' + BLUE)).status, 404);
  assert.equal((await as('/admin/usage?key=' + blue.id)).status, 404);
  const mine = await (await as('/admin/usage?group_by=team')).json();
  assert.deepEqual(mine.data.map((l) => l.team), [RED]);
});

test('a viewer: their team\'s usage and spend, nothing to change', async (t) => {
  const page = await open(t, { hash: '#usage', token: viewer.token });
  assert.equal(await page.locator('#who').textContent(), `${viewer.id} · viewer · ${BLUE}`);
  const usage = page.locator('#usage-table tbody tr');
  await usage.filter({ hasText: 'blue-bot' }).waitFor();
  assert.equal(await usage.filter({ hasText: 'red-bot' }).count(), 0, 'another team\'s usage is not shown');
  await onlyTeam(page, BLUE);
  await page.click('#tab-keys');
  await page.locator('#key-table tbody tr', { hasText: 'blue-bot' }).waitFor();
  assert.equal(await page.locator('#key-new').isVisible(), false, 'a viewer is offered no change');
});
