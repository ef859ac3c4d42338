// The playground page (GET /) in a real browser: Debian's Chromium driven by playwright-core,
// against a gateway on loopback serving the embedded default configuration with auth turned
// on (SLUICE_URL, SLUICE_KEY, SLUICE_ADMIN; TestPlayground starts it). SLUICE_SHOT is where
// the screenshot goes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, guarded } from './chromium.mjs';

const base = process.env.SLUICE_URL;
const KEY = process.env.SLUICE_KEY;
const ADMIN = process.env.SLUICE_ADMIN;
const SECRET = 'sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7'; // planted in the demo-secret alias
let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

// open loads the page in a fresh tab (its own sessionStorage), gives it the key, and waits
// for the model picker. The page is guarded (chromium.mjs): a request outside the gateway,
// a script error, a CSP violation or a dialog fails the test.
async function open(t, { width = 1200, height = 820, key = true } = {}) {
  const page = await guarded(browser, t, base, { width, height });
  await page.goto(base + '/');
  if (key) {
    await page.locator('#key-form').waitFor({ state: 'visible' }); // auth is on: the page asks
    await page.fill('#key-input', KEY);
    await page.press('#key-input', 'Enter');
    await page.locator('#model option[value="demo-secret"]').waitFor({ state: 'attached' });
  }
  return page;
}

// ask sends text on model, and returns the locator of its answer (the last one).
async function ask(page, model, text) {
  await page.selectOption('#model', model);
  await page.fill('#prompt', text);
  await page.press('#prompt', 'Enter'); // the keyboard sends
  const answer = page.locator('.msg.assistant').last();
  await answer.waitFor();
  return answer;
}

// finished waits for the answer's run to end, and returns its status figure.
async function finished(page, answer) {
  await page.locator('#send:not([disabled])').waitFor();
  return answer.locator('[data-k="status"] dd').textContent();
}

const figure = (answer, k) => answer.locator(`[data-k="${k}"] dd`).textContent();

test('the page: public, a strict CSP, no external resource, the key asked for', async (t) => {
  const r = await fetch(base + '/');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
  const csp = r.headers.get('content-security-policy');
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const js = await fetch(base + '/playground/app.js');
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal((await fetch(base + '/v1/models')).status, 401, 'auth is on for /v1');
  const page = await open(t);
  const models = await page.locator('#model option').allTextContents();
  for (const m of ['demo-secret', 'demo-fallback', 'demo-restart']) assert.ok(models.includes(m), `${m} in ${models}`);
  assert.ok(!models.some((m) => m.includes('?')), 'scripted targets are left out of the picker');
  await page.locator('#send:not([disabled])').waitFor(); // the resume found nothing to resume
  assert.match(await page.locator('#hint').textContent(), /Try .*demo-secret/);
});

test('a streamed answer with a planted secret, masked; a reload mid-run resumes it', async (t) => {
  const page = await open(t);
  const answer = await ask(page, 'demo-secret', 'Show me the staging configuration.');
  await answer.locator('.text', { hasText: 'The API' }).waitFor(); // streaming, not over
  assert.equal(await page.locator('#stop').isEnabled(), true);
  await page.reload();
  await page.locator('#stop:not([disabled])').waitFor(); // the run is read again, live
  const resumed = page.locator('.msg.assistant').last();
  assert.equal(await finished(page, resumed), 'finished (stop)');
  const text = await resumed.locator('.text').textContent();
  assert.equal(text, 'Here is the staging configuration. The API key is [REDACTED:openai_key] and it never leaves the gateway: ' +
    'the redaction window masks it, however the answer is split. Done.');
  assert.equal(await resumed.locator('mark.redacted').textContent(), '[REDACTED:openai_key]');
  assert.equal(await page.locator('.msg.assistant').count(), 1, 'the resumed answer is shown once');
  assert.equal(await page.locator('.msg.user').count(), 1);
  assert.ok(!(await page.content()).includes(SECRET), 'the secret is nowhere on the page');
  assert.equal(await figure(resumed, 'target'), 'sim/text?…');
  assert.match(await figure(resumed, 'first token'), /ms$/);
  // The finished answer is history: a second reload shows it again, without a run.
  await page.reload();
  await page.locator('.msg.assistant .text').waitFor();
  assert.equal(await page.locator('.msg.assistant').count(), 1);
});

test('a fallback: the served target and the attempts; model output is text, never HTML', async (t) => {
  const page = await open(t);
  const html = '<img src=x id=injected><b>bold</b> & done';
  // The first call of demo-fallback in this gateway: its failing target is not in cooldown yet
  // (three failures in a row put it there, and the chain then skips it).
  const answer = await ask(page, 'demo-fallback', html);
  assert.equal(await finished(page, answer), 'finished (stop)');
  assert.equal(await answer.locator('.text').textContent(), html); // sim/echo repeats it
  assert.equal(await page.locator('#injected, .msg b').count(), 0);
  assert.equal(await figure(answer, 'target'), 'sim/echo');
  assert.match(await figure(answer, 'attempts'), /^([2-9]) \(1 fallback\)$/);
  assert.match(await page.locator('#activity .step-head').last().textContent(), /^Step 1 · sim\/echo · [2-9] attempts/);
});

test('a restart drops the discarded text, visibly', async (t) => {
  const page = await open(t);
  const answer = await ask(page, 'demo-restart', 'Tell me something.');
  assert.equal(await finished(page, answer), 'finished (stop)');
  assert.equal(await answer.locator('.text').textContent(),
    'This answer comes from the second target: the first one failed mid-answer, and the words it had streamed were dropped.');
  const dropped = await answer.locator('.restart-note del').textContent();
  assert.ok(dropped.length > 10, `the dropped text is shown struck through: ${dropped}`);
  assert.match(await page.locator('#activity .restart').last().textContent(), /Restarted on the next target/);
});

test('the stop button stops the run', async (t) => {
  const page = await open(t);
  const answer = await ask(page, 'demo-secret', 'Again, slowly.');
  await answer.locator('.text', { hasText: 'staging' }).waitFor();
  await page.click('#stop');
  assert.equal(await finished(page, answer), 'stopped');
  assert.ok(!(await answer.locator('.text').textContent()).includes('Done.'));
});

// A canned run (the browser's request answered by the test) covers what the embedded default
// may not show: two steps, reasoning collapsed, a determinate progress bar, a failed tool, the
// cost.
test('the activity lanes of a canned tool run', async (t) => {
  const page = await open(t);
  const chunks = [
    { type: 'start', messageId: 'msg_canned', messageMetadata: { runId: 'run_canned', model: 'demo-secret' } },
    { type: 'start-step' },
    { type: 'reasoning-start', id: 'r1' }, { type: 'reasoning-delta', id: 'r1', delta: 'Two tools.' }, { type: 'reasoning-end', id: 'r1' },
    { type: 'tool-input-start', toolCallId: 'c1', toolName: 'count', providerExecuted: true, dynamic: true },
    { type: 'tool-input-available', toolCallId: 'c1', toolName: 'count', input: { to: 4 }, providerExecuted: true, dynamic: true },
    { type: 'tool-input-start', toolCallId: 'c2', toolName: 'fetch_page', providerExecuted: true, dynamic: true },
    { type: 'tool-input-available', toolCallId: 'c2', toolName: 'fetch_page', input: { url: 'https://example.com' }, providerExecuted: true, dynamic: true },
    { type: 'data-tool-progress', id: 'c1', data: { done: 2, total: 4, message: 'halfway' } },
    { type: 'data-tool-progress', id: 'c1', data: { done: 4, total: 4, message: 'counted' } },
    { type: 'tool-output-available', toolCallId: 'c1', output: { count: 4 }, providerExecuted: true, dynamic: true },
    { type: 'data-tool-progress', id: 'c2', data: { message: 'connecting' } },
    { type: 'tool-output-error', toolCallId: 'c2', errorText: 'fetch_page timed out', providerExecuted: true, dynamic: true },
    { type: 'finish-step' },
    { type: 'message-metadata', messageMetadata: { round: 1, roundUsage: { inputTokens: 10, outputTokens: 4 }, target: 'openai/gpt-4.1-mini', attempts: 1, ttftMs: 0 } },
    { type: 'start-step' },
    { type: 'text-start', id: 't2' }, { type: 'text-delta', id: 't2', delta: 'Counted to 4; the page timed out.' }, { type: 'text-end', id: 't2' },
    { type: 'finish-step' },
    { type: 'message-metadata', messageMetadata: { round: 2, roundUsage: { inputTokens: 30, outputTokens: 9 }, usage: { inputTokens: 40, outputTokens: 13 }, target: 'openai/gpt-4.1-mini', attempts: 1, ttftMs: 640, costUsd: 0.0000368 } },
    { type: 'finish', finishReason: 'stop', messageMetadata: { usage: { inputTokens: 40, outputTokens: 13 }, target: 'openai/gpt-4.1-mini', attempts: 1, costUsd: 0.0000368 } },
  ];
  const body = chunks.map((c, i) => `id: run_canned-${i + 1}\ndata: ${JSON.stringify(c)}\n\n`).join('') + `id: run_canned-${chunks.length + 1}\ndata: [DONE]\n\n`;
  await page.route(base + '/v1/ui/chat', (route) => route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body }));
  const answer = await ask(page, 'demo-secret', 'Use your tools.');
  assert.equal(await finished(page, answer), 'finished (stop)');
  assert.equal(await answer.locator('details.reasoning').getAttribute('open'), null, 'reasoning is collapsed');
  assert.equal(await answer.locator('.text').textContent(), 'Counted to 4; the page timed out.');
  assert.equal(await figure(answer, 'cost'), '$0.000037');
  assert.equal(await figure(answer, 'first token'), '640 ms');
  assert.equal(await figure(answer, 'tokens'), '40 in · 13 out');
  const run = page.locator('#activity .run').last();
  assert.equal(await run.locator('.step').count(), 2);
  const count = run.locator('[data-tool-call="c1"]');
  assert.match(await count.locator('.args').textContent(), /"to": 4/);
  assert.equal(await count.locator('progress').getAttribute('max'), '4');
  assert.equal(await count.locator('progress').evaluate((p) => p.value), 4);
  assert.equal(await count.locator('.progress').getAttribute('data-complete'), 'true');
  assert.match(await count.locator('.result').textContent(), /"count": 4/);
  const fetchPage = run.locator('[data-tool-call="c2"]');
  assert.equal(await fetchPage.locator('progress').count(), 0, 'no total: no bar');
  assert.equal(await fetchPage.locator('.error').textContent(), 'fetch_page timed out');
  assert.equal(await fetchPage.locator('.badge').textContent(), 'failed');
});

// The demo tool of the embedded default (issue 12: the `demo` alias, served by the simulated
// provider, calls the in-process tool demo_progress). Until that alias exists this test is
// skipped, loudly; once it does, it must pass.
test('the demo tool: progress to completion, its result, then the answer', async (t) => {
  const page = await open(t);
  const models = await page.locator('#model option').allTextContents();
  if (!models.includes('demo')) {
    t.skip('PENDING issue 12: the embedded default has no `demo` alias yet');
    return;
  }
  const answer = await ask(page, 'demo', 'Run the demo tool.');
  const tool = page.locator('#activity .run').last().locator('.tool').first();
  await tool.locator('progress').waitFor();
  assert.equal(await finished(page, answer), 'finished (stop)');
  const bar = tool.locator('progress');
  const [value, max] = await bar.evaluate((p) => [p.value, p.max]);
  assert.ok(max > 0 && value === max, `a completed progress bar: ${value}/${max}`);
  assert.equal(await tool.locator('.badge').textContent(), 'done');
  assert.equal(await tool.locator('.result').isVisible(), true);
  assert.ok((await answer.locator('.text').last().textContent()).length > 0);
  assert.match(await figure(answer, 'target'), /^sim\//);
  assert.equal(await figure(answer, 'attempts'), '1', 'two rounds on one target: one attempt (the rounds are calls), no fallback');
});

test('the admin tab asks for the token and refreshes /admin/stats', async (t) => {
  const page = await open(t);
  // A streamed chat completion, whose time to first token and fallback /admin/stats counts
  // (frontend runs have neither there yet: see the report of issue 13).
  const r = await fetch(base + '/v1/chat/completions', {
    method: 'POST', headers: { Authorization: 'Bearer ' + KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'demo-fallback', stream: true, messages: [{ role: 'user', content: 'Count me in.' }] }),
  });
  assert.equal(r.status, 200);
  await r.text();
  await page.click('#tab-admin');
  await page.locator('#admin-form').waitFor({ state: 'visible' });
  await page.fill('#admin-input', ADMIN);
  await page.press('#admin-input', 'Enter');
  const row = page.locator('#stats tbody tr', { hasText: 'demo-fallback' });
  await row.waitFor();
  const cells = await row.locator('th, td').allTextContents();
  assert.equal(cells[1], 'sim/echo');
  assert.ok(Number(cells[2]) >= 1, `requests: ${cells}`);
  assert.ok(Number(cells[4]) >= 1, `fallbacks: ${cells}`);
  assert.match(cells[5], /ms$/, `TTFT p50: ${cells}`);
  // Refreshed every few seconds while shown.
  await page.waitForRequest((r) => r.url().endsWith('/admin/stats'), { timeout: 10_000 });
  assert.equal(await page.evaluate(() => sessionStorage.getItem('sluice.admin')), ADMIN);
  assert.equal(await page.evaluate(() => localStorage.length), 0, 'nothing is kept beyond the tab');
});

test('readable at 360 px and usable from the keyboard', async (t) => {
  const page = await open(t, { width: 360, height: 740 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no horizontal scroll at 360 px (${overflow} px over)`);
  await page.locator('body').focus();
  const seen = new Set();
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Tab');
    seen.add(await page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName));
  }
  for (const id of ['tab-chat', 'model', 'prompt', 'send']) assert.ok(seen.has(id), `Tab reaches #${id}: ${[...seen]}`);
  await page.focus('#tab-chat');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.locator('#view-admin').isVisible(), true, 'arrow keys switch tabs');
});

test('the screenshot', async (t) => {
  const page = await open(t, { height: 1000 });
  const models = await page.locator('#model option').allTextContents();
  if (models.includes('demo')) await finished(page, await ask(page, 'demo', 'Run the demo tool.'));
  await finished(page, await ask(page, 'demo-secret', 'Show me the staging configuration.'));
  await finished(page, await ask(page, 'demo-restart', 'Tell me something.'));
  await finished(page, await ask(page, 'demo-fallback', 'Hello, Sluice!'));
  await page.locator('#prompt').blur();
  await page.locator('#transcript').evaluate((el) => el.scrollTo(0, 0)); // the demo tool's answer first
  await page.screenshot({ path: process.env.SLUICE_SHOT });
});
