// The official OpenAI Node SDK against Anthropic targets behind the gateway (the mock speaks
// the Anthropic Messages wire on /v1/messages): a Chat Completions client cannot tell, except
// by the model and X-Sluice-Target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.SLUICE_URL + '/v1', apiKey: 'unused', maxRetries: 0 });
const messages = [{ role: 'user', content: 'Hello from a Chat client.' }];

test('overloaded_error after message_start falls back to the OpenAI target, one clean stream', async () => {
  const { data: stream, response } = await client.chat.completions
    .create({ model: 'overloaded-then-openai', messages, stream: true })
    .withResponse();
  let text = '';
  let roles = 0;
  let finish = null;
  for await (const chunk of stream) {
    for (const ch of chunk.choices) {
      if (ch.delta.role) roles++;
      text += ch.delta.content ?? '';
      finish = ch.finish_reason ?? finish;
    }
  }
  assert.equal(response.headers.get('x-sluice-target'), 'mock/text?len=80&chunk=9');
  assert.equal(roles, 1, 'one role chunk: no Anthropic preamble reached the client');
  assert.equal(text.length, 80);
  assert.equal(finish, 'stop');
});

test('Anthropic-only alias: text, non-streamed and streamed, with usage', async () => {
  const c = await client.chat.completions.create({ model: 'claude', messages });
  assert.equal(c.choices[0].message.content, 'Hello from a Chat client.');
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.ok(c.usage.prompt_tokens > 0 && c.usage.completion_tokens > 0, JSON.stringify(c.usage));

  const stream = await client.chat.completions.create({
    model: 'claude', messages, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let usage = null;
  for await (const chunk of stream) {
    for (const ch of chunk.choices) text += ch.delta.content ?? '';
    usage = chunk.usage ?? usage;
  }
  assert.equal(text, 'Hello from a Chat client.');
  assert.ok(usage && usage.total_tokens === usage.prompt_tokens + usage.completion_tokens, JSON.stringify(usage));
});

test('Anthropic-only alias: streamed tool calls arrive whole', async () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];
  const runner = client.chat.completions.stream({ model: 'claude-tools', messages, tools });
  const fragments = [];
  for await (const chunk of runner) {
    for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) fragments.push(tc);
  }
  assert.equal(fragments.length, 2, 'one delta per call');
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0].finish_reason, 'tool_calls');
  const calls = final.choices[0].message.tool_calls;
  assert.equal(calls.length, 2);
  for (const c of calls) {
    assert.equal(c.function.name, 'get_weather');
    assert.ok(JSON.parse(c.function.arguments).location, c.function.arguments);
    assert.ok(c.id.startsWith('toolu_') || c.id.length > 0);
  }
});
