// The official OpenAI Node SDK's Responses API against the gateway, served by each kind of
// upstream: Chat Completions (mock/), OpenAI Responses (resp/) and Anthropic Messages (anth/).
// responses.stream(...).finalResponse() checks the event sequence as it assembles the answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.SLUICE_URL + '/v1', apiKey: 'unused', maxRetries: 0 });
const input = 'Hello from a Responses client.';
const tools = [{
  type: 'function', name: 'get_weather', strict: false,
  parameters: { type: 'object', properties: { location: { type: 'string' } } },
}];

for (const up of ['mock', 'resp', 'anth']) {
  test(`${up}: responses.create, not streamed: text and usage`, async () => {
    const r = await client.responses.create({ model: `${up}/echo`, input });
    assert.equal(r.object, 'response');
    assert.equal(r.status, 'completed');
    assert.equal(r.output_text, input);
    assert.ok(r.usage.input_tokens > 0 && r.usage.output_tokens > 0, JSON.stringify(r.usage));
    assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
  });

  test(`${up}: responses.create, streamed: events in order`, async () => {
    const stream = await client.responses.create({ model: `${up}/echo`, input, stream: true });
    let text = '';
    let seq = -1;
    const types = [];
    for await (const ev of stream) {
      assert.equal(ev.sequence_number, seq + 1);
      seq = ev.sequence_number;
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
    assert.equal(text, input);
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
  });

  test(`${up}: responses.stream().finalResponse() with a function call`, async () => {
    const final = await client.responses
      .stream({ model: `${up}/tools?calls=1`, input, tools })
      .finalResponse();
    const calls = final.output.filter((o) => o.type === 'function_call');
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'get_weather');
    assert.ok(JSON.parse(calls[0].arguments).location, calls[0].arguments);
    assert.ok(calls[0].call_id);
    assert.ok(final.usage.output_tokens > 0);
  });
}

test('a failure after text raises in the SDK', async () => {
  const stream = await client.responses.create({ model: 'mock/text?len=60&fail=error&after=3', input, stream: true });
  let text = '';
  await assert.rejects(async () => {
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
    }
  }, (err) => {
    assert.match(String(err.message), /mock\/text/);
    return true;
  });
  assert.ok(text.length > 0, 'some text came before the error');
});

test('a Responses target whose stream fails before any output falls back', async () => {
  const { data: r, response } = await client.responses.create({ model: 'resp-error-then-chat', input }).withResponse();
  assert.equal(r.output_text, input);
  assert.equal(response.headers.get('x-sluice-target'), 'mock/echo');
  assert.equal(response.headers.get('x-sluice-attempts'), '2');
});
