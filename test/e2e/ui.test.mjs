// The Vercel AI SDK's own UI message stream code against a real gateway: the `ai` package
// pinned at 7.0.173 (and 5.0.0, strict, and 6.0.326 for the older protocols) parses every run
// with its uiMessageChunkSchema and folds it into the final UIMessage. The Go test in this
// folder starts the gateway (SLUICE_URL) and writes the gateway's allow-list of chunk types and
// fields per protocol version to SLUICE_UI_ALLOW; the models are aliases of its config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as ai7 from 'ai';
import * as ai6 from 'ai6';
import * as ai5 from 'ai5';

const base = process.env.SLUICE_URL;
const allow = JSON.parse(readFileSync(process.env.SLUICE_UI_ALLOW, 'utf8'));
const KEY = 'sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7';
let chats = 0;
const chatId = (name) => `${name}-${process.pid}-${++chats}`;
const userMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hello, gateway.' }] };

function body(id, model) {
  return JSON.stringify({ id, model, trigger: 'submit-message', messages: [userMessage] });
}

async function post(id, model, proto, signal) {
  const headers = { 'content-type': 'application/json' };
  if (proto) headers['x-sluice-ui-protocol'] = proto;
  return fetch(`${base}/v1/ui/chat`, { method: 'POST', headers, body: body(id, model), signal });
}

// frames splits an SSE body into its frames' id and data.
function frames(text) {
  return text.split('\n\n').filter((f) => f.trim() && !f.startsWith(':')).map((f) => {
    const id = /^id: (.*)$/m.exec(f)?.[1];
    const data = /^data: (.*)$/m.exec(f)?.[1];
    return { id, data };
  });
}

// checkKeys checks every chunk's type and keys against the gateway's allow-list for ver.
function checkKeys(ver, fs) {
  const list = allow[ver];
  for (const { id, data } of fs) {
    assert.ok(id, `a frame without an id line: ${data}`);
    if (data === '[DONE]') continue;
    const c = JSON.parse(data);
    const key = c.type.startsWith('data-') ? 'data-*' : c.type;
    assert.ok(list[key], `${ver}: chunk type ${c.type} is not in the allow-list`);
    for (const k of Object.keys(c)) assert.ok(list[key].includes(k), `${ver}: field ${k} of ${c.type} is not in the allow-list`);
  }
  assert.equal(fs.at(-1).data, '[DONE]');
}

// parse7 parses a body with ai 7's parseJsonEventStream and uiMessageChunkSchema: every chunk
// must pass the schema.
async function parse7(text) {
  const stream = new Response(text).body;
  const out = [];
  for await (const r of ai7.parseJsonEventStream({ stream, schema: ai7.uiMessageChunkSchema })) {
    assert.ok(r.success, `a chunk the v7 schema rejects: ${r.error}`);
    out.push(r.value);
  }
  return out;
}

// fold runs chunks through lib's readUIMessageStream and returns the final message.
async function fold(lib, chunks) {
  let last;
  const stream = chunks instanceof ReadableStream ? chunks : ReadableStream.from(chunks);
  for await (const m of lib.readUIMessageStream({ stream, onError: (e) => { throw e; } })) last = m;
  return last;
}

const textOf = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');

async function run7(model) {
  const r = await post(chatId(model), model);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  assert.equal(r.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  assert.equal(r.headers.get('x-accel-buffering'), 'no');
  const text = await r.text();
  const fs = frames(text);
  checkKeys('v7', fs);
  const chunks = await parse7(text);
  return { fs, chunks, message: await fold(ai7, chunks) };
}

test('a run: masked text and usage metadata', async () => {
  const { chunks, message } = await run7('ui-secret');
  assert.equal(message.role, 'assistant');
  const text = textOf(message);
  assert.ok(text.includes('[REDACTED:openai_key]'), text);
  assert.ok(!text.includes('Xq7Rt2Lm9Vb4'), text);
  assert.match(message.metadata.runId, /^run_/);
  assert.equal(message.metadata.model, 'ui-secret');
  assert.ok(message.metadata.usage.totalTokens > 0);
  assert.ok(message.metadata.usage.outputTokens > 0);
  assert.deepEqual(chunks.map((c) => c.type).filter((t) => t.endsWith('step')), ['start-step', 'finish-step']);
  assert.equal(chunks.at(-1).type, 'finish');
  assert.equal(chunks.at(-1).finishReason, 'stop');
  assert.ok(chunks.at(-1).messageMetadata.usage.totalTokens > 0);
});

test('a client tool call ends the run for the client', async () => {
  const { chunks, message } = await run7('ui-tools');
  const tool = message.parts.find((p) => p.type === 'tool-get_weather');
  assert.ok(tool, JSON.stringify(message.parts));
  assert.equal(tool.state, 'input-available');
  assert.equal(typeof tool.input.location, 'string');
  assert.match(tool.toolCallId, /\S/);
  assert.equal(textOf(message), 'Checking.');
  assert.equal(chunks.at(-1).finishReason, 'tool-calls');
});

test('restart: the first target dies mid-text, the second answers in the same step', async () => {
  const { fs, chunks, message } = await run7('ui-restart');
  const types = chunks.map((c) => c.type);
  const reset = types.indexOf('reset-step');
  assert.ok(reset > 0, types.join());
  assert.ok(types.slice(0, reset).includes('text-delta'), 'the first attempt streamed text');
  const firstText = chunks.find((c) => c.type === 'text-start').id;
  const after = chunks.slice(reset + 1);
  assert.equal(after[0].type, 'text-start');
  assert.notEqual(after[0].id, firstText);
  assert.equal(types.filter((t) => t === 'start-step').length, 1);
  assert.ok(!types.includes('error'));
  assert.equal(textOf(message), 'Second answer.');
  assert.equal(message.parts.filter((p) => p.type === 'step-start').length, 1);
  assert.equal(fs.length, chunks.length + 1);
});

test('resume after a forced disconnect ends with the same message', async () => {
  const id = chatId('resume');
  const ac = new AbortController();
  const r = await post(id, 'ui-slow', undefined, ac.signal);
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let got = '';
  while (frames(got).length < 6 || !got.endsWith('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    got += dec.decode(value, { stream: true });
  }
  ac.abort(); // the client leaves; the run goes on
  const head = frames(got);

  // The AI SDK's resume: a full replay through the real transport.
  const transport = new ai7.DefaultChatTransport({ api: `${base}/v1/ui/chat` });
  const stream = await transport.reconnectToStream({ chatId: id });
  assert.ok(stream, 'got no stream to resume');
  const replayed = await fold(ai7, stream);

  // An EventSource-style resume: what follows the last frame the client had.
  const rest = await fetch(`${base}/v1/ui/chat/${id}/stream`, { headers: { 'last-event-id': head.at(-1).id } });
  assert.equal(rest.status, 200);
  const all = head.map((f) => `id: ${f.id}\ndata: ${f.data}\n\n`).join('') + (await rest.text());
  checkKeys('v7', frames(all));
  const resumed = await fold(ai7, await parse7(all));
  assert.deepEqual(resumed, replayed);

  const whole = await run7('ui-slow');
  assert.equal(textOf(replayed), textOf(whole.message));
  assert.ok(textOf(replayed).length > 100);
  assert.equal(await transport.reconnectToStream({ chatId: id }), null, 'a finished run answers 204');
});

// The older protocols, through each version's own DefaultChatTransport (which parses with
// that version's uiMessageChunkSchema: ai@5.0.0's is strict) and readUIMessageStream.
for (const [ver, lib] of [['v5', ai5], ['v6', ai6]]) {
  test(`${ver}: restart and a client tool call`, async () => {
    // A target of its own per version: two failures stay under the cooldown threshold.
    for (const model of [`ui-restart-${ver}`, 'ui-tools']) {
      const raw = await post(chatId(model), model, ver);
      checkKeys(ver, frames(await raw.text()));
      const transport = new lib.DefaultChatTransport({ api: `${base}/v1/ui/chat`, headers: { 'x-sluice-ui-protocol': ver }, body: { model } });
      const stream = await transport.sendMessages({ chatId: chatId(model), messages: [userMessage], trigger: 'submit-message', abortSignal: undefined });
      const message = await fold(lib, stream);
      if (model === 'ui-tools') {
        assert.equal(message.parts.find((p) => p.type === 'tool-get_weather')?.state, 'input-available');
        continue;
      }
      // The few lines a v5/v6 client adds: hide parts a restart abandoned.
      const visible = message.parts.filter((p) => !p.providerMetadata?.sluice?.restarted);
      assert.equal(visible.filter((p) => p.type === 'text').map((p) => p.text).join(''), 'Second answer.');
      assert.ok(message.parts.length > visible.length, 'the abandoned part is flagged');
    }
  });
}
