// The playground's protocol code (internal/playground/static/stream.js) without a browser:
// SSE framing at any split, and the fold of the UI message stream's chunks into the answer the
// page shows and the UIMessage it sends back, which the AI SDK's own validator must accept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { validateUIMessages } from 'ai';

// stream.js is an ES module in a folder with no package.json (it is embedded in the gateway as
// it is): imported from its source, so that no node version's guess of its module kind matters.
const src = readFileSync(new URL('../../internal/playground/static/stream.js', import.meta.url), 'utf8');
const { readFrames, newAnswer, apply, progressOf, toUIMessage, textOf, shortTarget } =
  await import('data:text/javascript;charset=utf-8,' + encodeURIComponent(src));

const enc = new TextEncoder();

// bodyOf is a byte stream of text cut every n bytes.
function bodyOf(text, n) {
  const b = enc.encode(text);
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i >= b.length) return c.close();
      c.enqueue(b.slice(i, i + n));
      i += n;
    },
  });
}

test('frames are read whole at any split, keepalives skipped', async () => {
  const wire = 'id: run_1-1\ndata: {"type":"start"}\n\n: keepalive\n\nid: run_1-2\ndata: {"type":"text-delta","id":"t","delta":"é ok"}\n\nid: run_1-3\ndata: [DONE]\n\n';
  for (const n of [1, 2, 3, 7, 1000]) {
    const got = [];
    for await (const f of readFrames(bodyOf(wire, n))) got.push(f);
    assert.deepEqual(got, [
      { id: 'run_1-1', data: '{"type":"start"}' },
      { id: 'run_1-2', data: '{"type":"text-delta","id":"t","delta":"é ok"}' },
      { id: 'run_1-3', data: '[DONE]' },
    ], `split every ${n} bytes`);
  }
});

const toolRun = [
  { type: 'start', messageId: 'msg_1', messageMetadata: { runId: 'run_1', model: 'demo' } },
  { type: 'start-step' },
  { type: 'reasoning-start', id: 'rsn_1' },
  { type: 'reasoning-delta', id: 'rsn_1', delta: 'Let me count.' },
  { type: 'reasoning-end', id: 'rsn_1' },
  { type: 'tool-input-start', toolCallId: 'call_1', toolName: 'demo_progress', providerExecuted: true, dynamic: true },
  { type: 'tool-input-available', toolCallId: 'call_1', toolName: 'demo_progress', input: { steps: 3 }, providerExecuted: true, dynamic: true },
  { type: 'data-tool-progress', id: 'call_1', data: { done: 1, total: 3, message: 'one' } },
  { type: 'data-tool-progress', id: 'call_1', data: { done: 3, total: 3, message: 'three' } },
  { type: 'tool-output-available', toolCallId: 'call_1', output: { ok: true }, providerExecuted: true, dynamic: true },
  { type: 'finish-step' },
  { type: 'message-metadata', messageMetadata: { round: 1, roundUsage: { inputTokens: 5, outputTokens: 2 }, usage: { inputTokens: 5, outputTokens: 2 }, target: 'sim/tools', attempts: 1, ttftMs: 0 } },
  { type: 'start-step' },
  { type: 'text-start', id: 'txt_2' },
  { type: 'text-delta', id: 'txt_2', delta: 'Counted ' },
  { type: 'text-delta', id: 'txt_2', delta: 'to three.' },
  { type: 'text-end', id: 'txt_2' },
  { type: 'finish-step' },
  { type: 'message-metadata', messageMetadata: { round: 2, usage: { inputTokens: 9, outputTokens: 6 }, target: 'sim/tools', attempts: 1, ttftMs: 812, costUsd: 0.000012 } },
  { type: 'finish', finishReason: 'stop', messageMetadata: { usage: { inputTokens: 9, outputTokens: 6 }, target: 'sim/tools', attempts: 1, costUsd: 0.000012 } },
];

test('a tool run: steps, progress updated in place, output, figures', async () => {
  const a = newAnswer('demo');
  for (const c of toolRun) apply(a, c);
  assert.equal(a.status, 'finished');
  assert.equal(a.id, 'msg_1');
  assert.equal(a.runId, 'run_1');
  assert.equal(textOf(a), 'Counted to three.');
  assert.equal(a.steps.length, 2);
  assert.deepEqual(a.steps[0].tools, ['call_1']);
  assert.equal(a.steps[0].meta.target, 'sim/tools');
  assert.deepEqual(progressOf(a, 'call_1'), { done: 3, total: 3, message: 'three' });
  assert.equal(a.parts.filter((p) => p.type === 'data-tool-progress').length, 1, 'progress replaced, not appended');
  const tool = a.parts.find((p) => p.type === 'dynamic-tool');
  assert.equal(tool.state, 'output-available');
  assert.equal(tool.providerExecuted, true);
  assert.deepEqual(tool.output, { ok: true });
  assert.equal(a.ttftMs, 812, 'the first round had no text: its ttftMs is not the answer\'s');
  assert.equal(a.metadata.costUsd, 0.000012);
  // What the page sends back is a valid UIMessage for the AI SDK.
  const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Count.' }] };
  await validateUIMessages({ messages: [user, toUIMessage(a)] });
});

test('reset-step drops the step\'s text and keeps it aside', () => {
  const a = newAnswer('demo-restart');
  for (const c of [
    { type: 'start', messageId: 'm' }, { type: 'start-step' },
    { type: 'text-start', id: 'txt_1' }, { type: 'text-delta', id: 'txt_1', delta: 'First words' },
    { type: 'reset-step' },
    { type: 'text-start', id: 'txt_2' }, { type: 'text-delta', id: 'txt_2', delta: 'Second answer.' },
    { type: 'text-end', id: 'txt_2' }, { type: 'finish-step' },
    { type: 'message-metadata', messageMetadata: { round: 1, target: 'sim/echo', attempts: 2, ttftMs: 0 } },
    { type: 'finish', finishReason: 'stop' },
  ]) apply(a, c);
  assert.equal(textOf(a), 'Second answer.');
  assert.deepEqual(a.steps[0].restarts, [{ text: 'First words', reasoning: '' }]);
  assert.equal(a.ttftMs, 0, 'under a millisecond, with text: 0, not unknown');
  assert.deepEqual(a.parts.map((p) => p.type), ['step-start', 'text']);
});

test('abort, error and transient warnings', () => {
  const stopped = newAnswer('x');
  for (const c of [{ type: 'start' }, { type: 'start-step' }, { type: 'abort', reason: 'stopped' }]) apply(stopped, c);
  assert.equal(stopped.status, 'stopped');
  const failed = newAnswer('x');
  for (const c of [{ type: 'start' }, { type: 'error', errorText: 'sim/echo failed' }, { type: 'finish', finishReason: 'error' },
    { type: 'data-warning', data: { code: 'max_rounds', message: 'The run stopped after 128 rounds.' }, transient: true }]) apply(failed, c);
  assert.equal(failed.status, 'error');
  assert.equal(failed.error, 'sim/echo failed');
  assert.deepEqual(failed.warnings, ['The run stopped after 128 rounds.']);
  assert.equal(failed.parts.length, 0, 'a transient part is not part of the message');
});

test('scripted targets are shown without their script', () => {
  assert.equal(shortTarget('sim/echo'), 'sim/echo');
  assert.equal(shortTarget('sim/text?len=0&say=sk-proj-abc'), 'sim/text?…');
});
