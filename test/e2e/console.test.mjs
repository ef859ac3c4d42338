// The operator console (/console/) in a real browser: Debian's Chromium driven by
// playwright-core, against a gateway on loopback with an admin token (SLUICE_URL,
// SLUICE_ADMIN; TestConsole starts it). SLUICE_SHOTS is the folder for screenshots:
// console-*.png show real data, fixture-*.png canned records.
//
// The gateway keeps a request log (TestConsole configures it): every step runs against
// real records.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { base, ADMIN, start, stop, admin, newKey, chat, logged, shot, open, session } from './consolekit.mjs';
// The console's own formats: the figures on the page are the API's numbers in them.
import { int, ms, pct, usd, weight } from '../../internal/console/static/fmt.js';

const HOSTILE = ['<img src=x onerror=alert(1)>', '</script><script>alert(1)</script>'];
let logsServed = false;

before(async () => {
  logsServed = (await admin('/admin/logs?limit=1')).status !== 404;
  assert.ok(logsServed, 'the gateway must keep a request log (TestConsole configures one)');
  await start();
});

after(stop);

test('the console: public files under a strict CSP, nothing without a session', async () => {
  const r = await fetch(base + '/console/');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
  const csp = r.headers.get('content-security-policy');
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /require-trusted-types-for 'script'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.deepEqual(await (await fetch(base + '/console/session')).json(), { signed_in: false });
  assert.equal((await fetch(base + '/admin/keys')).status, 401, 'no session, no token: no admin API');
  const bad = await fetch(base + '/console/session', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"token":"nope"}' });
  assert.equal(bad.status, 401);
  assert.equal(bad.headers.get('set-cookie'), null);
});

test('sign in: an HttpOnly, SameSite=Strict, expiring cookie; the token kept nowhere', async (t) => {
  const page = await open(t, { signIn: false });
  await page.locator('#sign-in').waitFor({ state: 'visible' });
  await page.fill('#token', 'not-the-token');
  await page.press('#token', 'Enter');
  await page.locator('#sign-in-error', { hasText: 'neither the admin token nor a live personal token' }).waitFor();
  await page.fill('#token', ADMIN);
  await page.press('#token', 'Enter');
  await page.locator('#pages').waitFor({ state: 'visible' });
  assert.equal(await page.locator('#tab-logs').getAttribute('aria-selected'), 'true');
  assert.equal(await page.locator('#view-logs').isVisible(), true);
  await page.locator('#log-note').filter({ hasText: /\S/ }).waitFor();
  if (!logsServed) assert.match(await page.locator('#log-note').textContent(), /keeps no request log/);

  const { cookie, header, csrf } = await session(page);
  assert.equal(cookie.name, 'sluice_console', 'plain HTTP: no __Host- prefix');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.secure, false, 'not Secure over plain HTTP');
  assert.equal(cookie.path, '/');
  const hours = (cookie.expires * 1000 - Date.now()) / 3_600_000;
  assert.ok(hours > 11.9 && hours <= 12, `expires in ${hours} h, want 12`);
  assert.equal(await page.evaluate(() => document.cookie), '', 'no script reads the session');
  assert.equal(await page.evaluate(() => sessionStorage.length + localStorage.length), 0, 'nothing kept in storage');
  assert.equal(await page.locator('#token').inputValue(), '');
  assert.ok(!(await page.content()).includes(ADMIN), 'the token is not on the page');

  // The session stands in for the admin token: reads with the cookie, changes with the
  // cookie and the CSRF token, and no change without it.
  assert.equal((await fetch(base + '/admin/keys', { headers: { Cookie: header } })).status, 200);
  const body = JSON.stringify({ name: 'csrf-probe' });
  const refused = await fetch(base + '/admin/keys', { method: 'POST', headers: { Cookie: header, 'Content-Type': 'application/json' }, body });
  assert.equal(refused.status, 401, 'a change without the CSRF token');
  const made = await fetch(base + '/admin/keys', { method: 'POST', headers: { Cookie: header, 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' }, body });
  assert.equal(made.status, 201);
  const { id } = await made.json();
  assert.equal((await admin('/admin/keys/' + id, { method: 'DELETE' })).status, 200);
});

test('keys: create one, see its secret once, use it, edit it, revoke it', async (t) => {
  const page = await open(t, { hash: '#keys' });
  await page.locator('#key-note').filter({ hasText: /keys?\./ }).waitFor();
  await page.click('#key-new');
  await page.fill('[name=name]', 'console-e2e');
  await page.fill('[name=models]', 'sim/echo, demo-fallback');
  await page.fill('[name=rpm]', '60');
  await page.fill('[name=daily_usd]', '1');
  await page.fill('[name=monthly_usd]', '20');
  await page.fill('[name=mcp_servers]', 'docs');
  await page.fill('[name=metadata]', 'team=e2e\nproject=console');
  await page.click('#key-save');
  const secret = (await page.locator('#key-secret-value').textContent()).trim();
  assert.match(secret, /^sk-sluice-/);
  const row = page.locator('#key-table tbody tr', { hasText: 'console-e2e' });
  await row.waitFor();
  const cells = await row.locator('th, td').allTextContents();
  assert.equal(cells[2], '—', 'made by admin without a team');
  assert.equal(cells[3], 'sim/echo, demo-fallback');
  assert.match(cells[4], /60 rpm/);
  assert.match(cells[4], /MCP: docs/);
  assert.match(cells[5], /\$0 of \$1\.00/, `today's spend against the daily budget: ${cells[5]}`);
  assert.match(cells[6], /of \$20\.00/);

  const used = await chat(secret, 'sim/echo', 'Hello from the console test.');
  assert.equal(used.status, 200, 'the new key works');

  await t.test('its request appears in the live tail', async () => {
    await page.click('#tab-logs');
    await page.check('#log-tail');
    await page.locator('#log-note', { hasText: 'Live' }).waitFor();
    const again = await chat(secret, 'sim/echo', 'Live, please.');
    await page.locator(`#log-table tbody tr[data-id="${again.id}"]`).waitFor();
    assert.match(await page.locator(`#log-table tbody tr[data-id="${again.id}"]`).textContent(), /console-e2e/);
    await page.uncheck('#log-tail');
    await page.click('#tab-keys');
  });

  // Shown once: dismissed, it is gone from the page, and a reload does not bring it back.
  await page.click('#key-secret button:has-text("I have saved it")');
  assert.equal(await page.locator('#key-secret').isVisible(), false);
  assert.ok(!(await page.content()).includes(secret));
  await page.reload();
  await row.waitFor(); // still signed in: the cookie
  assert.ok(!(await page.content()).includes(secret));

  await shot(page, 'console-keys.png');
  await row.locator('button', { hasText: 'Edit' }).click();
  assert.equal(await page.locator('[name=rpm]').inputValue(), '60');
  assert.equal(await page.locator('[name=metadata]').inputValue(), 'project=console\nteam=e2e');
  await page.fill('[name=rpm]', '120');
  await page.click('#key-save');
  await page.locator('#key-note', { hasText: 'Saved console-e2e' }).waitFor();
  await row.filter({ hasText: '120 rpm' }).waitFor();

  await row.locator('button', { hasText: 'Revoke' }).click();
  await row.locator('button', { hasText: 'Yes, revoke' }).click();
  await row.waitFor({ state: 'detached' });
  assert.match(await page.locator('#key-note').textContent(), /Revoked console-e2e/);
  assert.equal((await chat(secret, 'sim/echo', 'Still there?')).status, 401, 'a revoked key is refused');
});

test('audit: a key changed on the Keys page is on the Audit page, with who and its diff, without its secret', async (t) => {
  const page = await open(t, { hash: '#keys' });
  await page.locator('#key-note').filter({ hasText: /keys?\./ }).waitFor();
  await page.click('#key-new');
  await page.fill('[name=name]', 'audit-e2e');
  await page.fill('[name=rpm]', '60');
  await page.click('#key-save');
  const secret = (await page.locator('#key-secret-value').textContent()).trim();
  assert.match(secret, /^sk-sluice-/);
  await page.click('#key-secret button:has-text("I have saved it")'); // shown once, then gone from the page
  const row = page.locator('#key-table tbody tr', { hasText: 'audit-e2e' });
  await row.waitFor();
  await row.locator('button', { hasText: 'Edit' }).click();
  await page.fill('[name=rpm]', '90');
  await page.click('#key-save');
  await row.filter({ hasText: '90 rpm' }).waitFor();
  const { data } = await (await admin('/admin/keys')).json();
  const id = data.find((k) => k.name === 'audit-e2e').id;

  await page.click('#tab-audit');
  const patch = page.locator(`#audit-table tbody tr.entry`, { hasText: 'PATCH /admin/keys/{id}' }).filter({ hasText: id });
  await patch.waitFor();
  const cells = await patch.locator('td').allTextContents();
  assert.match(cells[1], /^admin \(admin\)$/, `who: ${cells[1]}`);
  assert.match(cells[3], new RegExp(`key ${id}`));
  assert.match(cells[4], /rpm/);
  await patch.click();
  const panel = patch.locator('xpath=following-sibling::tr[1]'); // this entry's diff, not another's
  const change = panel.locator('table.diff tr[data-change="changed"]', { hasText: 'rpm' });
  await change.waitFor();
  assert.equal((await change.locator('td.before').textContent()).trim(), '60');
  assert.equal((await change.locator('td.after').textContent()).trim(), '90');
  const create = page.locator('#audit-table tbody tr.entry', { hasText: 'POST /admin/keys' }).filter({ hasText: id });
  await create.waitFor();
  await shot(page, 'console-audit.png');

  // Filtered to the key: its two changes; the secret is on no page the audit log serves.
  await page.fill('#audit-filters [name=resource_id]', id);
  await page.click('#audit-filters button[type=submit]');
  await page.locator('#audit-note', { hasText: /^2 changes shown/ }).waitFor();
  await create.click();
  assert.ok(!(await page.content()).includes(secret), 'the audit page shows the key\'s secret');
  assert.ok(!(await (await admin('/admin/audit?limit=1000')).text()).includes(secret));
  await admin('/admin/keys/' + id, { method: 'DELETE' });
});

test('teams: create one, see it listed, edit its limits and budget, delete it', async (t) => {
  const page = await open(t, { hash: '#teams' });
  await page.locator('#team-note').filter({ hasText: /teams?\./ }).waitFor();
  await page.click('#team-new');
  await page.fill('#team-form [name=team_name]', 'e2e-search');
  await page.fill('#team-form [name=team_models]', 'sim/echo, demo-fallback');
  await page.fill('#team-form [name=team_rpm]', '600');
  await page.fill('#team-form [name=team_daily_usd]', '50');
  await page.fill('#team-form [name=team_monthly_usd]', '1000');
  await page.click('#team-save');
  const row = page.locator('#team-table tbody tr', { hasText: 'e2e-search' });
  await row.waitFor();
  let cells = await row.locator('th, td').allTextContents();
  assert.equal(cells[1], 'sim/echo, demo-fallback');
  assert.match(cells[2], /600 rpm/);
  assert.match(cells[3], /of \$50\.00/, `today's spend against the daily budget: ${cells[3]}`);
  assert.match(cells[4], /of \$1,?000\.00/);
  const listed = await (await admin('/admin/teams')).json();
  assert.ok(listed.data.some((x) => x.name === 'e2e-search' && x.rpm === 600), 'the admin API lists the team');

  await row.locator('button', { hasText: 'Edit' }).click();
  assert.equal(await page.locator('#team-form [name=team_rpm]').inputValue(), '600');
  assert.ok(await page.locator('#team-form [name=team_name]').isDisabled(), "a team's name cannot change");
  await page.fill('#team-form [name=team_tpm]', '100000');
  await page.click('#team-save');
  await page.locator('#team-table tbody tr', { hasText: /100,?000 tpm/ }).waitFor();
  cells = await row.locator('th, td').allTextContents();
  assert.match(cells[2], /600 rpm · 100,?000 tpm/);
  await shot(page, 'console-teams.png');

  await row.locator('button', { hasText: 'Delete' }).click();
  await row.locator('button', { hasText: 'Yes, delete' }).click();
  await row.waitFor({ state: 'detached' });
  assert.match(await page.locator('#team-note').textContent(), /Deleted e2e-search/);
});

test('logs: filter, and a request that fell back shows both attempts', async (t) => {
  const { secret } = await newKey({ name: 'logs-e2e', models: ['*'] });
  const r = await chat(secret, 'demo-fallback', 'Fall back, please.');
  assert.equal(r.status, 200);
  await logged(r.id);
  const page = await open(t);
  await page.fill('#log-filters [name=alias]', 'demo-fallback');
  await page.click('#log-filters button[type=submit]');
  const row = page.locator(`#log-table tbody tr[data-id="${r.id}"]`);
  await row.waitFor();
  // The row is in the unfiltered list too: wait for the filtered answer to replace it.
  await page.waitForFunction(() => [...document.querySelectorAll('#log-table tbody tr td:nth-child(5)')]
    .every((td) => td.textContent === 'demo-fallback'));
  for (const alias of await page.locator('#log-table tbody tr td:nth-child(5)').allTextContents()) assert.equal(alias, 'demo-fallback');
  // The row's columns are the record's, as the API serves it (issue 50).
  const rec = await logged(r.id);
  assert.ok(rec.attempts.length >= 2, `the record's attempts: ${JSON.stringify(rec.attempts)}`);
  assert.deepEqual(await logColumns(row), logColumnsOf(rec));
  await shot(page, 'console-logs.png');
  await row.locator('a').click();
  await page.locator('.timeline').waitFor();
  const attempts = page.locator('.timeline tbody tr');
  assert.ok((await attempts.count()) >= 2, 'both attempts');
  assert.equal(await attempts.first().getAttribute('data-state'), 'error');
  assert.equal(await attempts.last().getAttribute('data-state'), 'ok');
  assert.match(await attempts.last().textContent(), /sim\/echo/);
  await shot(page, 'console-detail.png');
  // A bad filter is a 400 that names it: the field is marked.
  await page.click('a.back');
  await page.fill('#log-filters [name=status]', 'many');
  await page.click('#log-filters button[type=submit]');
  await page.locator('#log-filters [name=status][aria-invalid=true]').waitFor();
});

// logColumns reads a Logs row's wire, attempts (fallback), tokens, prompt cache and affinity
// cells; logColumnsOf is what they must say for record rec, the API's (issue 50).
async function logColumns(row) {
  const cell = (c) => row.locator('td.' + c).textContent();
  return { wire: await cell('wire'), attempts: await cell('attempts'), tokens: await cell('tokens'),
    cache: await cell('prompt-cache'), affinity: await cell('affinity') };
}

function logColumnsOf(rec) {
  const n = (rec.attempts || []).length;
  const read = rec.cache_read_tokens ?? 0;
  const written = rec.cache_write_tokens ?? 0;
  return { wire: rec.wire, attempts: n > 1 ? `${n} (fallback)` : String(n || '—'), tokens: `${int(rec.tokens_in)} → ${int(rec.tokens_out)}`,
    cache: read || written ? `${int(read)} / ${int(written)}` : '—', affinity: rec.affinity || '—' };
}

test('captured hostile content is shown as text and runs no script', async (t) => {
  const prompt = HOSTILE.join(' ');

  await t.test('a real captured request', async (t) => {
    const { secret } = await newKey({ name: 'xss-e2e', models: ['*'] });
    const r = await chat(secret, 'sim/echo', prompt); // sim/echo answers with the prompt
    assert.equal(r.status, 200);
    const rec = await logged(r.id);
    assert.ok(rec.content, 'the record has no content: TestConsole must turn capture on (logs.capture: content)');
    const page = await open(t, { hash: '#logs/' + encodeURIComponent(r.id) });
    const req = page.locator('#log-detail pre.captured[data-part=request]');
    await req.waitFor();
    for (const s of HOSTILE) assert.ok((await req.textContent()).includes(s), `the request shows ${s} as text`);
    assert.ok((await page.locator('#log-detail pre.captured[data-part=answer]').textContent()).includes(HOSTILE[0]));
    assert.equal(await page.locator('#log-detail img, #log-detail script').count(), 0);
    assert.equal(await page.locator('script').count(), 1, 'the page module only');
  });

  // A canned record (answered by the test) puts the hostile text in every field a record
  // holds, for the table and the detail: this part runs whether or not the log is served.
  await t.test('a canned record with hostile text in every field', async (t) => {
    const rec = {
      id: 'req_fixture_xss', time: new Date().toISOString(), replica: 'e2e', key_id: 'key_fixture', key_name: HOSTILE[0], team: HOSTILE[0],
      key_meta: { team: HOSTILE[1] }, wire: 'openai', method: 'POST', path: '/v1/chat/completions', alias: HOSTILE[1], target: 'sim/echo',
      attempts: [{ target: 'sim/text?fail=500', kind: 'unavailable', ms: 12, status: 500 }, { target: 'sim/echo', kind: 'none', ms: 40, status: 200 }],
      status: 200, kind: 'none', stream: true, first_event_ms: 44, first_token_ms: 47, duration_ms: 60, overhead_ms: 1.4,
      tokens_in: 21, tokens_out: 21, tokens_cached: 0, tokens_reasoning: 0, tokens_estimated: true, cost_usd: 0.0000368, cache: 'bypass',
      cache_read_tokens: 12, cache_write_tokens: 3, cache_write_1h_tokens: 0, saved_usd: 0.0000021, cache_dropped: 0, affinity: HOSTILE[0],
      redactions: 1, guardrails: [{ name: HOSTILE[0], stage: 'input', verdict: 'allow' }],
      tools: [{ name: HOSTILE[1], server: 'docs', ms: 5, outcome: 'ok' }], user_agent: HOSTILE[1], trace_id: '', error: HOSTILE[0],
      capture: 'content',
      content: { request: JSON.stringify({ model: 'sim/echo', messages: [{ role: 'user', content: prompt }] }), answer: prompt, cap: 32768, truncated: false },
    };
    const page = await open(t, { height: 1100, signIn: false }); // guarded: a script run, a dialog, fail the test
    const json = (body) => (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });
    await page.route((u) => u.pathname === '/admin/logs', json({ object: 'list', data: [rec], next_cursor: null }));
    await page.route((u) => u.pathname === '/admin/logs/' + rec.id, json(rec));
    await page.fill('#token', ADMIN);
    await page.press('#token', 'Enter');
    const row = page.locator(`#log-table tbody tr[data-id="${rec.id}"]`);
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[2], HOSTILE[0]);
    assert.equal(cells[3], HOSTILE[0], 'the team column, as text');
    assert.equal(cells[4], HOSTILE[1]);
    assert.equal(cells[6], 'openai', 'the wire');
    assert.equal(cells[7], '2 (fallback)');
    assert.equal(cells[13], '12 / 3', 'the prompt cache: read / written');
    assert.equal(cells[14], HOSTILE[0], 'the affinity column, as text');
    assert.deepEqual(await logColumns(row), logColumnsOf(rec));
    await shot(page, 'fixture-logs.png');
    await row.locator('a').click();
    const req = page.locator('#log-detail pre.captured[data-part=request]');
    await req.waitFor();
    assert.equal(JSON.parse(await req.textContent()).messages[0].content, prompt);
    assert.equal(await page.locator('#log-detail pre.captured[data-part=answer]').textContent(), prompt);
    const detail = await page.locator('#log-detail').textContent();
    for (const s of HOSTILE) assert.ok(detail.split(s).length > 3, `${s} is shown as text, in several fields`);
    assert.equal(await page.locator('img').count(), 0, 'no element was made from the text');
    assert.equal(await page.locator('script').count(), 1, 'the page module only');
    assert.equal(await page.locator('.timeline tbody tr').count(), 2);
    await shot(page, 'fixture-detail.png');
  });
});

// canned is a record for the canned answers below.
function canned(n, extra = {}) {
  return {
    id: `req_canned_${n}`, time: new Date(Date.UTC(2026, 5, 30, 12, 0, 60 - n)).toISOString(), key_id: 'key_canned', key_name: 'canned',
    alias: 'demo-fallback', target: 'sim/echo', attempts: [{ target: 'sim/echo', kind: 'none', ms: 30, status: 200 }], status: 200,
    kind: 'none', stream: false, first_token_ms: 20, duration_ms: 31, tokens_in: 5, tokens_out: 7, cost_usd: 0.00001, cache: 'miss', ...extra,
  };
}

// The Logs page's own logic on canned answers (the test answers /admin/logs, so this runs
// whether or not the gateway serves the log): the filters in the query, load more with the
// cursor, a bad filter marked, the live tail, the export links.
test('the Logs page on canned answers: filters, load more, a bad filter, the live tail', async (t) => {
  const page = await open(t, { signIn: false });
  const asked = [];
  await page.route((u) => u.pathname === '/admin/logs', (route) => {
    const q = new URL(route.request().url()).searchParams;
    asked.push(q);
    if (q.get('status') === 'many') {
      return route.fulfill({ status: 400, contentType: 'application/json',
        body: JSON.stringify({ error: { message: 'status is an HTTP status, 200 or 4xx.', type: 'invalid_request_error', param: 'status', code: null } }) });
    }
    const second = q.get('cursor') === 'c2';
    const data = second ? [canned(3)] : [canned(1), canned(2)];
    return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ object: 'list', data, next_cursor: second ? null : 'c2' }) });
  });
  // One record, then the tail asks to be called again in ten minutes: no reconnection loop.
  const live = canned(0, { id: 'req_canned_live', key_name: 'live-one' });
  await page.route((u) => u.pathname === '/admin/logs/tail', (route) => route.fulfill({ status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }, body: `retry: 600000\n\ndata: ${JSON.stringify(live)}\n\n` }));
  await page.fill('#token', ADMIN);
  await page.press('#token', 'Enter');
  await page.locator('#log-table tbody tr[data-id="req_canned_2"]').waitFor();
  await page.fill('#log-filters [name=alias]', 'demo-fallback');
  await page.selectOption('#log-filters [name=stream]', 'false');
  await page.click('#log-filters button[type=submit]');
  await page.locator('#log-more').waitFor({ state: 'visible' });
  const q = asked.at(-1);
  assert.equal(q.get('alias'), 'demo-fallback');
  assert.equal(q.get('stream'), 'false');
  assert.equal(q.get('limit'), '100');
  assert.equal(q.has('key'), false, 'empty filters are left out');
  assert.match(await page.locator('#export-csv').getAttribute('href'), /^\/admin\/logs\/export\?format=csv&.*alias=demo-fallback/);
  await page.click('#log-more');
  await page.locator('#log-table tbody tr[data-id="req_canned_3"]').waitFor();
  assert.equal(asked.at(-1).get('cursor'), 'c2');
  assert.equal(await page.locator('#log-more').isVisible(), false, 'no cursor: no more');
  assert.equal(await page.locator('#log-table tbody tr').count(), 3);

  await page.check('#log-tail');
  const first = page.locator('#log-table tbody tr').first();
  await page.locator('#log-table tbody tr[data-id="req_canned_live"]').waitFor();
  assert.equal(await first.getAttribute('data-id'), 'req_canned_live', 'the tail puts new requests on top');
  assert.match(await first.textContent(), /live-one/);
  await page.uncheck('#log-tail');

  await page.fill('#log-filters [name=status]', 'many');
  await page.click('#log-filters button[type=submit]');
  await page.locator('#log-filters [name=status][aria-invalid=true]').waitFor();
  assert.match(await page.locator('#log-note').textContent(), /status is an HTTP status/);
});

// A gateway with the request log answers usage lines per bucket and group, with p95 TTFT,
// in the one shape of every answer (issue 50): the charts draw a line per group (canned: the
// usage account alone has no such lines).
test('usage on canned log-backed lines: a line per group, p95 TTFT', async (t) => {
  const page = await open(t, { signIn: false });
  await page.route((u) => u.pathname === '/admin/usage', (route) => {
    const q = new URL(route.request().url()).searchParams;
    const data = [];
    for (const bucket of ['2026-06-30T10:00:00Z', '2026-06-30T11:00:00Z', '2026-06-30T12:00:00Z']) {
      for (const [team, n] of [['search', 8], ['support', 3]]) {
        data.push({ bucket, group: team, requests: n, errors: team === 'support' ? 1 : 0, input_tokens: n * 10, output_tokens: n * 20,
          cache_read_tokens: n * 4, cache_write_tokens: 0, cost_usd: n / 1000, saved_usd: 0, cache_hits: 0, p95_first_token_ms: 100 + n,
          fallbacks: null, estimated: null, saved_tokens: null, cache_write_1h_tokens: null });
      }
    }
    return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ object: 'usage', source: 'logs',
      from: q.get('from'), to: q.get('to'), group_by: q.get('group_by'), bucket: q.get('bucket') ?? '', key: null, data,
      total: { requests: 33, errors: 3, input_tokens: 330, output_tokens: 660, cache_read_tokens: 132, cache_write_tokens: 0, cost_usd: 0.033,
        saved_usd: 0, cache_hits: 0, p95_first_token_ms: 108, fallbacks: null, estimated: null, saved_tokens: null, cache_write_1h_tokens: null } }) });
  });
  await page.goto(base + '/console/#usage');
  await page.fill('#token', ADMIN);
  await page.press('#token', 'Enter');
  await page.locator('.chart').first().waitFor();
  await page.selectOption('#usage-form [name=bucket]', 'hour');
  await page.selectOption('#usage-form [name=group]', 'meta');
  await page.fill('#usage-form [name=meta]', 'team');
  await page.click('#usage-form button[type=submit]');
  await page.locator('#usage-caption', { hasText: 'meta.team' }).waitFor();
  const titles = await page.locator('.chart figcaption').allTextContents();
  assert.deepEqual(titles, ['Requests', 'Tokens (input + output)', 'Cost', 'Cache-hit ratio (cache reads / input tokens)', 'Errors', 'TTFT p95',
    'Spend per team']);
  const ratios = await page.locator('.chart').nth(3).locator('circle title').allTextContents();
  assert.equal(ratios.length, 6);
  for (const r of ratios) assert.match(r, /: 40%$/, 'cache_read_tokens / input_tokens of each line');
  assert.deepEqual(await page.locator('.chart').first().locator('.legend li').allTextContents(), ['search', 'support']);
  assert.equal(await page.locator('.chart').first().locator('path.line').count(), 2);
  assert.equal(await page.locator('.chart').first().locator('circle').count(), 6);
  const rows = await page.locator('#usage-table tbody tr').allTextContents();
  assert.match(rows[0], /^search24/, `the busiest group first, summed: ${rows}`);
  await shot(page, 'fixture-usage.png');
});

test('usage: charts per key and over time, from the usage account', async (t) => {
  const a = await newKey({ name: 'team-search', models: ['*'], metadata: { team: 'search' } });
  const b = await newKey({ name: 'team-support', models: ['*'], metadata: { team: 'support' } });
  for (let i = 0; i < 6; i++) assert.equal((await chat(a.secret, 'sim/echo', `Search question ${i}: what is in the index today?`)).status, 200);
  for (let i = 0; i < 3; i++) assert.equal((await chat(b.secret, 'sim/echo', `Support ticket ${i}`)).status, 200);
  const page = await open(t, { hash: '#usage' });
  await page.locator('.chart').first().waitFor();
  const table = page.locator('#usage-table tbody tr');
  await table.filter({ hasText: 'team-search' }).waitFor();
  const first = await table.first().locator('th, td').allTextContents();
  assert.match(first[0], /^team-search \(key_/, 'groups named by key, the busiest first');
  assert.equal(first[1], '6');
  assert.ok((await page.locator('.chart figcaption').allTextContents()).some((c) => /^Requests/.test(c)));
  assert.ok(await page.locator('.chart svg rect, .chart svg circle').count() > 0);
  await shot(page, 'console-usage.png');
});

// The Usage page's figures are /admin/usage's, to the token and the cent, whichever source
// answers (issue 50: the page once showed 0 tokens and "—" where the log named them apart).
test('usage: the page shows the numbers of /admin/usage', async (t) => {
  const k = await newKey({ name: 'figures-e2e', models: ['*'] });
  let last;
  for (let i = 0; i < 4; i++) {
    last = await chat(k.secret, 'sim/echo', `Figures question ${i}: how many tokens is this?`);
    assert.equal(last.status, 200);
  }
  await logged(last.id);
  const day = new Date().toISOString().slice(0, 10);
  const page = await open(t, { hash: '#usage' });
  await page.locator('.chart').first().waitFor();
  for (const bucket of ['day', 'hour']) {
    const q = { from: day, to: day, bucket, group_by: 'key', key: k.id };
    const r = await admin('/admin/usage?' + new URLSearchParams(q));
    assert.equal(r.status, 200);
    const tot = (await r.json()).total;
    assert.equal(tot.requests, 4, 'the four calls, in the API');
    assert.ok(tot.input_tokens > 0 && tot.output_tokens > 0, `tokens in the API: ${JSON.stringify(tot)}`);
    await page.fill('#usage-form [name=from]', day);
    await page.fill('#usage-form [name=to]', day);
    await page.selectOption('#usage-form [name=bucket]', bucket);
    await page.selectOption('#usage-form [name=group]', 'key');
    await page.fill('#usage-form [name=key]', k.id);
    await page.click('#usage-form button[type=submit]');
    const fig = (name) => page.locator(`#usage-total [data-figure=${name}] dd`);
    await fig('requests').filter({ hasText: new RegExp(`^${int(tot.requests)}$`) }).waitFor();
    await fig('input').filter({ hasText: new RegExp(`^${int(tot.input_tokens)}$`) }).waitFor();
    assert.equal(await fig('output').textContent(), int(tot.output_tokens), `${bucket}: output tokens`);
    assert.equal(await fig('cost').textContent(), usd(tot.cost_usd), `${bucket}: cost`);
    assert.equal(await fig('errors').textContent(), int(tot.errors), `${bucket}: errors`);
    assert.equal(await fig('cache-reads').textContent(), int(tot.cache_read_tokens), `${bucket}: cache reads`);
    const row = await page.locator('#usage-table tbody tr').first().locator('th, td').allTextContents();
    assert.deepEqual(row.slice(1, 4), [int(tot.requests), int(tot.input_tokens), int(tot.output_tokens)], `${bucket}: the key's row`);
  }
});

// A target whose upstream reports prompt cache reads and writes (TestConsole serves it):
// the Usage page shows the cache-hit ratio and the cache reads the API counts, to the token,
// and the request's record its reads, writes, saving and affinity (issue 46).
test('usage and logs: the prompt cache, as the API counts it', async (t) => {
  const target = process.env.SLUICE_CACHED;
  assert.ok(target, 'TestConsole names the cached target (SLUICE_CACHED)');
  const k = await newKey({ name: 'cache-e2e', models: ['*'] });
  let last;
  for (let i = 0; i < 3; i++) {
    last = await chat(k.secret, target, `Turn ${i} of a long agent session.`);
    assert.equal(last.status, 200);
    await logged(last.id);
  }
  const day = new Date().toISOString().slice(0, 10);
  const r = await admin('/admin/usage?' + new URLSearchParams({ from: day, to: day, bucket: 'hour', group_by: 'key', key: k.id }));
  assert.equal(r.status, 200);
  const rep = await r.json();
  const lines = rep.data.filter((l) => l.group === k.id).sort((a, b) => (a.bucket < b.bucket ? -1 : 1));
  const reads = lines.reduce((n, l) => n + l.cache_read_tokens, 0);
  const input = lines.reduce((n, l) => n + l.input_tokens, 0);
  const saved = lines.reduce((n, l) => n + l.saved_usd, 0);
  assert.equal(reads, 3 * 1200, `the upstream read 1,200 tokens from its cache on each of 3 calls: ${JSON.stringify(rep.data)}`);

  const page = await open(t, { hash: '#usage' });
  await page.locator('.chart').first().waitFor();
  await page.fill('#usage-form [name=from]', day);
  await page.fill('#usage-form [name=to]', day);
  await page.selectOption('#usage-form [name=bucket]', 'hour');
  await page.selectOption('#usage-form [name=group]', 'key');
  await page.fill('#usage-form [name=key]', k.id);
  await page.click('#usage-form button[type=submit]');
  const fig = (name) => page.locator(`#usage-total [data-figure=${name}] dd`);
  // Both figures, as the form's last query (the key's alone) answers them: a load the form
  // started before the key was filled shows every key's input with the same cache reads.
  await fig('cache-reads').filter({ hasText: int(reads) }).waitFor();
  await fig('input').filter({ hasText: new RegExp(`^${int(input)}$`) }).waitFor();
  assert.equal(await fig('cache-reads').textContent(), int(reads), 'the total cache reads, to the token');
  assert.equal(await fig('cache-ratio').textContent(), pct(reads / input),
    `the page's input ${await fig('input').textContent()}, the API's ${input}: ${JSON.stringify(rep)}`);
  assert.equal(await fig('saved').textContent(), usd(saved));
  const chart = page.locator('.chart', { has: page.locator('figcaption', { hasText: 'Cache-hit ratio' }) });
  const points = await chart.locator('circle title').allTextContents();
  assert.deepEqual(points.map((p) => p.slice(p.lastIndexOf(': ') + 2)), lines.map((l) => pct(l.cache_read_tokens / l.input_tokens)),
    'a point per hour: its cache reads over its input tokens');
  const row = page.locator('#usage-table tbody tr').first();
  assert.equal((await row.locator('td').allTextContents())[3], int(reads), 'the group\'s cache reads');
  // Spend per team: a bar per team of the range's usage grouped by team, its cost the API's.
  const byTeam = await (await admin('/admin/usage?' + new URLSearchParams({ from: day, to: day, group_by: 'team', key: k.id }))).json();
  const spend = page.locator('.chart[data-chart=spend-per-team]');
  await spend.waitFor();
  const bars = await spend.locator('rect title').allTextContents();
  const want = byTeam.data.map((l) => [l.group || '(none)', l.cost_usd]).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  assert.deepEqual(bars, want.map(([g, c]) => `${g}: ${usd(c)}`), `the API's spend per team: ${JSON.stringify(byTeam)}`);
  assert.equal(bars.length, 1, 'one key, one team');
  assert.ok(byTeam.total.cost_usd > 0, 'the cached target is priced');
  await shot(page, 'console-usage-cache.png');

  const rec = await logged(last.id);
  assert.equal(rec.cache_read_tokens, 1200);
  assert.equal(rec.cache_write_tokens, 300);
  await page.goto(base + '/console/#logs');
  const tr = page.locator(`#log-table tbody tr[data-id="${last.id}"]`);
  await tr.waitFor();
  assert.equal(await tr.locator('td.prompt-cache').textContent(), `${int(1200)} / ${int(300)}`);
  assert.deepEqual(await logColumns(tr), logColumnsOf(rec), 'the row says what the API does, to the token');
  assert.equal(await tr.locator('td.wire').textContent(), 'chat');
  // The affinity filter reaches the API: none of these requests had one (a single target).
  await page.selectOption('#log-filters [name=affinity]', 'kept');
  await page.click('#log-filters button[type=submit]');
  await page.locator('#log-table tbody tr.empty').waitFor();
  await page.selectOption('#log-filters [name=affinity]', '');
  await page.click('#log-filters button[type=submit]');
  await tr.waitFor();
  await tr.locator('a').click();
  const pc = page.locator('#log-detail dl.prompt-cache');
  await pc.waitFor();
  const pairs = Object.fromEntries(await pc.locator('div').evaluateAll((ds) => ds.map((d) => [d.querySelector('dt').textContent, d.querySelector('dd').textContent])));
  assert.deepEqual(pairs, { Read: int(1200), Written: int(300), 'Written for 1 hour': int(rec.cache_write_1h_tokens), Saved: usd(rec.saved_usd),
    'Breakpoints dropped': int(rec.cache_dropped) });
  assert.ok(rec.saved_usd > 0, `the reads saved more than the writes cost: ${rec.saved_usd}`);
});

test('health: targets, their error rates and what routing learned', async (t) => {
  const page = await open(t, { hash: '#health' });
  const row = page.locator('#health-table tbody tr', { hasText: 'sim/echo' });
  await row.waitFor();
  const res = await admin('/admin/health');
  const served = res.status !== 404;
  if (served) {
    // Every target by its full name (a scripted target's query too: two differ only there,
    // issue 50), with the API's requests and error rate.
    const rep = await res.json();
    const long = rep.targets.map((x) => x.target).sort((a, b) => b.length - a.length)[0];
    assert.ok(long.length > 60 && long.includes('?'), `a long scripted target, query and all: ${long}`);
    const th = page.locator('#health-table tbody th', { hasText: long });
    await th.waitFor();
    const shown = Object.fromEntries(await page.locator('#health-table tbody tr').evaluateAll((trs) => trs
      .map((tr) => [tr.querySelector('th')?.textContent, [...tr.querySelectorAll('td')].map((td) => td.textContent)])));
    for (const x of rep.targets) {
      assert.ok(shown[x.target], `${x.target} is on the page by its full name: ${Object.keys(shown)}`);
      assert.deepEqual(shown[x.target].slice(1, 3), [int(x.requests), pct(x.error_rate)], `${x.target}: requests and error rate`);
    }
    assert.equal(await th.textContent(), long);
    assert.ok(await th.evaluate((el) => el.scrollWidth <= el.clientWidth), 'the name is wrapped, not cut');
  }
  if (!served) assert.match(await page.locator('#health-note').textContent(), /no \/admin\/health/);
  assert.match(await row.locator('td').nth(2).textContent(), /%$/);
  if (served) {
    // The next refresh's answer, as the page got it (the EWMA decays between two calls):
    // the row shows its requests, adaptive weight, first-token EWMA and attempts in flight
    // (issue 49) in the console's formats.
    const res = await page.waitForResponse((r) => new URL(r.url()).pathname === '/admin/health', { timeout: 15_000 });
    const tgt = (await res.json()).targets.find((x) => x.target === 'sim/echo');
    assert.ok(tgt, 'sim/echo in /admin/health');
    for (const k of ['weight', 'ewma_ms', 'in_flight']) assert.equal(typeof tgt[k], 'number', `${k} in /admin/health`);
    const want = [int(tgt.requests), weight(tgt.weight), tgt.ewma_ms ? ms(tgt.ewma_ms) : '—', int(tgt.in_flight)];
    let got;
    for (let i = 0; i < 40; i++) { // the page renders the answer once it parsed it
      const cells = await row.locator('td').allTextContents();
      got = [cells[1], cells[3], cells[4], cells[5]];
      if (JSON.stringify(got) === JSON.stringify(want)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(got, want, 'requests, weight, TTFT EWMA and in flight as /admin/health says');
  }
  await shot(page, served ? 'console-health.png' : 'fixture-health-stats.png'); // without /admin/health, not for the README
});

test('sign-out ends the session, for every request that carries it', async (t) => {
  const page = await open(t);
  const { header } = await session(page);
  await page.click('#sign-out');
  await page.locator('#sign-in').waitFor({ state: 'visible' });
  assert.match(await page.locator('#notice').textContent(), /Signed out/);
  assert.deepEqual(await (await fetch(base + '/console/session', { headers: { Cookie: header } })).json(), { signed_in: false });
  assert.equal((await fetch(base + '/admin/keys', { headers: { Cookie: header } })).status, 401);
  await page.reload();
  await page.locator('#sign-in').waitFor({ state: 'visible' });
});

test('readable at 360 px', async (t) => {
  const page = await open(t, { width: 360, height: 740, hash: '#keys' });
  await page.locator('#key-note').filter({ hasText: /keys?\./ }).waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no horizontal scroll at 360 px (${overflow} px over)`);
});
