// The official Anthropic TypeScript SDK against the gateway's Messages API (POST /v1/messages),
// on Anthropic and Chat targets of the mock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({ baseURL: process.env.SLUICE_URL, apiKey: 'unused', maxRetries: 0 });
const messages = [{ role: 'user', content: 'Hello from an Anthropic client.' }];

for (const model of ['claude', 'claude-on-chat']) {
  test(`${model}: create, not streamed and streamed, with usage`, async () => {
    const m = await client.messages.create({ model, max_tokens: 100, messages });
    assert.equal(m.type, 'message');
    assert.deepEqual(m.content, [{ type: 'text', text: 'Hello from an Anthropic client.' }]);
    assert.equal(m.stop_reason, 'end_turn');
    assert.ok(m.usage.input_tokens > 0 && m.usage.output_tokens > 0, JSON.stringify(m.usage));

    const stream = await client.messages.create({ model, max_tokens: 100, messages, stream: true });
    const types = [];
    let text = '';
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    assert.equal(text, 'Hello from an Anthropic client.');
    assert.equal(types[0], 'message_start');
    assert.equal(types.filter((t) => t === 'message_start').length, 1);
    assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop']);
  });
}

test('stream().finalMessage() with tools: input_json_delta, tool_use blocks whole', async () => {
  for (const model of ['claude-tools', 'chat-tools']) {
    const s = client.messages.stream({
      model, max_tokens: 200, messages,
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } }],
    });
    const fragments = [];
    s.on('inputJson', (partial) => fragments.push(partial));
    const m = await s.finalMessage();
    const calls = m.content.filter((b) => b.type === 'tool_use');
    assert.equal(calls.length, 2, JSON.stringify(m.content));
    assert.equal(m.stop_reason, 'tool_use');
    for (const c of calls) assert.equal(typeof c.input.location, 'string', JSON.stringify(c));
    assert.equal(fragments.length, 2, 'one input_json_delta per call, released whole');
  }
});

test('thinking: signatures come back and go again in a second turn', async () => {
  const m = await client.messages.stream({
    model: 'claude-think', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, messages,
  }).finalMessage();
  const th = m.content.find((b) => b.type === 'thinking');
  assert.ok(th && th.thinking.length > 0 && th.signature.length > 0, JSON.stringify(m.content));
  const second = await client.messages.create({
    model: 'claude', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: [...messages, { role: 'assistant', content: m.content }, { role: 'user', content: 'Second turn.' }],
  });
  assert.equal(second.content[0].text, 'Second turn.');
});

test('a failure after commit raises the SDK error from the error event', async () => {
  const stream = await client.messages.create({ model: 'claude-cut', max_tokens: 100, messages, stream: true });
  let text = '';
  await assert.rejects(async () => {
    for await (const ev of stream) {
      if (ev.type === 'content_block_delta') text += ev.delta.text;
    }
  }, (err) => err instanceof Anthropic.APIError && /overloaded/i.test(err.message));
  assert.ok(text.length > 0, 'some text came before the failure');
});

test('a 529 overloaded is retried by the SDK; a 400 is not', async () => {
  const retrying = new Anthropic({ baseURL: process.env.SLUICE_URL, apiKey: 'unused', maxRetries: 2 });
  const { data: m, response } = await retrying.messages.create({ model: 'overloaded-once', max_tokens: 100, messages }).withResponse();
  assert.equal(m.content[0].text, 'Hello from an Anthropic client.');
  assert.equal(response.status, 200);

  let tries = 0;
  const counting = new Anthropic({
    baseURL: process.env.SLUICE_URL, apiKey: 'unused', maxRetries: 2,
    fetch: (url, init) => { tries++; return fetch(url, init); },
  });
  await assert.rejects(counting.messages.create({ model: 'claude', messages }), (err) => {
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.equal(err.status, 400);
    assert.match(err.message, /max_tokens/);
    assert.ok(err.requestID, 'request-id header');
    return true;
  });
  assert.equal(tries, 1, 'a 400 is not retried');

  await assert.rejects(client.messages.create({ model: 'overloaded-always', max_tokens: 10, messages }), (err) => {
    assert.equal(err.status, 529);
    assert.equal(err.error?.error?.type, 'overloaded_error');
    return true;
  });
});

test('countTokens: the Anthropic target counts', async () => {
  const { data, response } = await client.messages.countTokens({ model: 'claude', messages }).withResponse();
  assert.ok(data.input_tokens > 0);
  assert.equal(response.headers.get('x-sluice-token-count'), null);
  assert.equal(response.headers.get('x-sluice-target'), 'anth/echo');
});

test('countTokens: an estimate, marked as such', async () => {
  const { data, response } = await client.messages.countTokens({ model: 'claude-on-chat', messages }).withResponse();
  assert.ok(data.input_tokens > 0);
  assert.equal(response.headers.get('x-sluice-token-count'), 'estimated');
});
