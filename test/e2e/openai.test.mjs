// The official OpenAI Node SDK against a real gateway in front of the mock upstream. The Go
// test in this folder starts both and sets SLUICE_URL; the model names are mock scripts
// (internal/mockllm).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.SLUICE_URL + '/v1', apiKey: 'unused', maxRetries: 0 });
const messages = [{ role: 'user', content: 'Hello there, gateway.' }];

test('non-streamed completion', async () => {
  const c = await client.chat.completions.create({ model: 'mock/echo', messages });
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.choices[0].message.content, 'Hello there, gateway.');
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.ok(c.usage.total_tokens > 0);
});

test('stream read with the SDK', async () => {
  const stream = await client.chat.completions.create({ model: 'mock/echo?chunk=3', messages, stream: true });
  let text = '';
  let finish = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(chunk.usage, undefined);
    for (const ch of chunk.choices) {
      text += ch.delta.content ?? '';
      finish = ch.finish_reason ?? finish;
    }
  }
  assert.equal(text, 'Hello there, gateway.');
  assert.equal(finish, 'stop');
  assert.ok(chunks > 3, `got ${chunks} chunks, want several`);
});

test('stream helper assembles the final completion', async () => {
  const runner = client.chat.completions.stream({ model: 'mock/text?len=120&chunk=7', messages });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0].message.role, 'assistant');
  assert.equal(final.choices[0].message.content.length, 120);
  assert.equal(final.choices[0].finish_reason, 'stop');
});

test('streamed tool calls arrive whole and parse', async () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];
  const runner = client.chat.completions.stream({ model: 'mock/tools?calls=2&split=1,5,9', messages, tools });
  const fragments = [];
  for await (const chunk of runner) {
    for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) fragments.push(tc);
  }
  assert.equal(fragments.length, 2, 'one delta per call');
  for (const f of fragments) assert.ok(JSON.parse(f.function.arguments).location, f.function.arguments);
  const final = await runner.finalChatCompletion();
  const calls = final.choices[0].message.tool_calls;
  assert.equal(calls.length, 2);
  assert.equal(final.choices[0].finish_reason, 'tool_calls');
  for (const c of calls) {
    assert.equal(c.function.name, 'get_weather');
    assert.ok(JSON.parse(c.function.arguments).location);
  }
});

test('a stream that fails after text raises APIError with the upstream message', async () => {
  const stream = await client.chat.completions.create({ model: 'mock/text?len=40&fail=error&after=3&msg=upstream+fell+over', messages, stream: true });
  let text = '';
  await assert.rejects(async () => {
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  }, (err) => {
    assert.ok(err instanceof OpenAI.APIError, `got ${err?.constructor?.name}, want APIError`);
    assert.match(err.message, /upstream fell over/);
    assert.match(err.message, /failed after the answer started/);
    return true;
  });
  assert.ok(text.length > 0, 'text before the failure');
});

test('an unknown model raises NotFoundError', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages }), (err) => {
    assert.ok(err instanceof OpenAI.NotFoundError, `got ${err?.constructor?.name}, want NotFoundError`);
    assert.equal(err.code, 'model_not_found');
    return true;
  });
});

test('the usage chunk appears only when asked', async () => {
  const withUsage = await client.chat.completions.create({ model: 'mock/text?len=40', messages, stream: true, stream_options: { include_usage: true } });
  let usage = null;
  for await (const chunk of withUsage) if (chunk.usage) usage = chunk.usage;
  assert.ok(usage && usage.completion_tokens > 0, 'usage when asked');
  const without = await client.chat.completions.create({ model: 'mock/text?len=40', messages, stream: true });
  for await (const chunk of without) assert.ok(!chunk.usage, 'no usage when not asked');
});
