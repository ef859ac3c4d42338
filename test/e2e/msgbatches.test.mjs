// The official Anthropic TypeScript SDK's message batches through the gateway (issue 48),
// passed to a mock of Anthropic's Message Batches API (msgBatchUpstream in objects_test.go),
// which echoes each request's last message and names the model it was sent as. The Go test
// sets SLUICE_ANTHROPIC_URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';

const base = process.env.SLUICE_ANTHROPIC_URL;
const client = new Anthropic({ baseURL: base, apiKey: 'unused', maxRetries: 0 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const request = (id, text) => ({ custom_id: id, params: { model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: text }] } });

test('message batch: create, retrieve until ended, results', async () => {
  const created = await client.messages.batches.create({
    requests: [request('first', 'Hello one.'), request('second', 'Hello two.'), request('bad-third', 'Nope.')],
  });
  assert.match(created.id, /^msgbatch_/);
  assert.notEqual(created.id, 'msgbatch_01Mock1', 'the id the client sees is the gateway\'s');
  assert.equal(created.type, 'message_batch');
  assert.equal(created.processing_status, 'in_progress');
  assert.equal(created.request_counts.processing, 3);
  assert.equal(created.results_url, null);

  let b = created;
  for (let i = 0; b.processing_status !== 'ended' && i < 20; i++) {
    await sleep(50);
    b = await client.messages.batches.retrieve(created.id);
  }
  assert.equal(b.id, created.id);
  assert.equal(b.processing_status, 'ended');
  assert.deepEqual(b.request_counts, { processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
  assert.equal(b.results_url, `${base}/v1/messages/batches/${created.id}/results`, 'results_url points at the gateway');

  const seen = {};
  for await (const r of await client.messages.batches.results(created.id)) {
    assert.equal(seen[r.custom_id], undefined, `${r.custom_id} twice`);
    seen[r.custom_id] = r.result;
  }
  assert.deepEqual(Object.keys(seen).sort(), ['bad-third', 'first', 'second']);
  assert.equal(seen.first.type, 'succeeded');
  assert.equal(seen.first.message.content[0].text, 'Hello one.');
  assert.equal(seen.first.message.model, 'claude-sonnet-4-5', 'the alias is sent as the target\'s model');
  assert.equal(seen.second.message.content[0].text, 'Hello two.');
  assert.equal(seen.second.message.usage.output_tokens, 6);
  assert.equal(seen['bad-third'].type, 'errored');
  assert.equal(seen['bad-third'].error.error.type, 'invalid_request_error');

  const listed = [];
  for await (const x of client.messages.batches.list()) listed.push(x.id);
  assert.ok(listed.includes(created.id), `list ${listed} holds ${created.id}`);
});

test('message batch: cancel, delete, then not found', async () => {
  const b = await client.messages.batches.create({ requests: [request('only', 'Cancel me.')] });
  const c = await client.messages.batches.cancel(b.id);
  assert.equal(c.id, b.id);
  assert.equal(c.processing_status, 'ended');
  assert.equal(c.request_counts.canceled, 1);
  const d = await client.messages.batches.delete(b.id);
  assert.deepEqual([d.id, d.type], [b.id, 'message_batch_deleted']);
  await assert.rejects(client.messages.batches.retrieve(b.id),
    (e) => e instanceof Anthropic.NotFoundError && e.error?.error?.type === 'not_found_error');
  await assert.rejects(client.messages.batches.retrieve('msgbatch_nope'), (e) => e instanceof Anthropic.NotFoundError);
});

test('message batch of an unknown model is refused in Anthropic\'s shape', async () => {
  await assert.rejects(
    client.messages.batches.create({ requests: [{ custom_id: 'x', params: { model: 'nope', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } }] }),
    (e) => e.status >= 400 && e.status < 500 && e.error?.type === 'error' && typeof e.error?.error?.type === 'string');
});
