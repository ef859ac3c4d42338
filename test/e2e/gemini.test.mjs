// The official Google Gen AI SDK (@google/genai) against the gateway's Gemini API
// (POST /v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse, :countTokens),
// on Chat and Anthropic targets of the mock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI, ApiError } from '@google/genai';

const ai = new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: process.env.SLUICE_URL } });
const contents = [{ role: 'user', parts: [{ text: 'Hello from a Gemini client.' }] }];

for (const model of ['g-echo', 'g-anth']) {
  test(`${model}: generateContent, not streamed and streamed`, async () => {
    const r = await ai.models.generateContent({ model, contents });
    assert.equal(r.text, 'Hello from a Gemini client.');
    assert.equal(r.candidates[0].finishReason, 'STOP');
    assert.ok(r.usageMetadata.promptTokenCount > 0 && r.usageMetadata.totalTokenCount > 0, JSON.stringify(r.usageMetadata));

    let text = '';
    let last;
    for await (const chunk of await ai.models.generateContentStream({ model, contents })) {
      text += chunk.text ?? '';
      last = chunk;
    }
    assert.equal(text, 'Hello from a Gemini client.');
    assert.equal(last.candidates[0].finishReason, 'STOP');
    assert.ok(last.usageMetadata.totalTokenCount > 0);
  });
}

test('function calling in two turns', async () => {
  const tools = [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather',
    parameters: { type: 'OBJECT', properties: { location: { type: 'STRING' } } } }] }];
  const r = await ai.models.generateContent({ model: 'g-tools', contents, config: { tools } });
  const calls = r.functionCalls;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'get_weather');
  assert.equal(typeof calls[0].args.location, 'string');

  const second = await ai.models.generateContent({
    model: 'g-echo',
    contents: [
      ...contents,
      r.candidates[0].content,
      { role: 'user', parts: [{ functionResponse: { id: calls[0].id, name: 'get_weather', response: { temp: 21 } } }, { text: 'So warm.' }] },
    ],
    config: { tools },
  });
  assert.equal(second.text, 'So warm.');
});

test('countTokens', async () => {
  const r = await ai.models.countTokens({ model: 'g-echo', contents });
  assert.ok(r.totalTokens > 0, JSON.stringify(r));
});

test('an error before the first byte and one inside the stream raise ApiError', async () => {
  await assert.rejects(ai.models.generateContent({ model: 'nothing', contents }), (e) => e instanceof ApiError && e.status === 404);
  await assert.rejects(async () => {
    for await (const _ of await ai.models.generateContentStream({ model: 'g-cut', contents })) { /* text, then the error */ }
  }, (e) => e instanceof ApiError && e.status === 502);
});

test('apiVersion v1: /v1/models/{model}:generateContent beside the OpenAI model list', async () => {
  const v1 = new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: process.env.SLUICE_URL, apiVersion: 'v1' } });
  const r = await v1.models.generateContent({ model: 'g-echo', contents });
  assert.equal(r.text, 'Hello from a Gemini client.');
  let text = '';
  for await (const chunk of await v1.models.generateContentStream({ model: 'g-echo', contents })) text += chunk.text ?? '';
  assert.equal(text, 'Hello from a Gemini client.');
  const list = await fetch(`${process.env.SLUICE_URL}/v1/models/g-echo`);
  assert.equal(list.status, 200);
});

test('keepalives (bare CRLFs) while the upstream is slow do not disturb the stream', async () => {
  let text = '';
  for await (const chunk of await ai.models.generateContentStream({ model: 'g-slow', contents })) text += chunk.text ?? '';
  assert.equal(text.length, 20);
});
