// Server-side tools through the Vercel AI SDK (ai 7, and 6 and 5 under aliases): the gateway
// runs the model's call of its HTTP tool, streams the tool's progress as a data part whose id
// is the call's, and feeds the result to the next round. The final UIMessage has the tool
// part with its input and output, and one progress part, updated in place to its last value.
// The Go test in this folder starts the gateway (SLUICE_URL), the tool and the config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as ai7 from 'ai';
import * as ai6 from 'ai6';
import * as ai5 from 'ai5';

const base = process.env.SLUICE_URL;
const allow = JSON.parse(readFileSync(process.env.SLUICE_UI_ALLOW, 'utf8'));
const userMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Count the rows.' }] };
let chats = 0;
const chatId = (name) => `${name}-${process.pid}-${++chats}`;

// checkKeys checks every chunk of a raw body against the gateway's allow-list for ver.
function checkKeys(ver, text) {
  const list = allow[ver];
  for (const f of text.split('\n\n').filter((f) => f.startsWith('id: '))) {
    const data = /^data: (.*)$/m.exec(f)[1];
    if (data === '[DONE]') continue;
    const c = JSON.parse(data);
    const key = c.type.startsWith('data-') ? 'data-*' : c.type;
    assert.ok(list[key], `${ver}: chunk type ${c.type} is not in the allow-list`);
    for (const k of Object.keys(c)) assert.ok(list[key].includes(k), `${ver}: field ${k} of ${c.type}`);
  }
}

// send runs model through lib's DefaultChatTransport and readUIMessageStream: the final message.
async function send(lib, model, ver) {
  const headers = ver ? { 'x-sluice-ui-protocol': ver } : {};
  const transport = new lib.DefaultChatTransport({ api: `${base}/v1/ui/chat`, headers, body: { model } });
  const stream = await transport.sendMessages({ chatId: chatId(model), messages: [userMessage], trigger: 'submit-message', abortSignal: undefined });
  let last;
  for await (const m of lib.readUIMessageStream({ stream, onError: (e) => { throw e; } })) last = m;
  return last;
}

const textOf = (m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');

for (const [ver, lib] of [['v7', ai7], ['v6', ai6], ['v5', ai5]]) {
  test(`${ver}: a server-side tool with progress, then the answer`, async () => {
    const raw = await fetch(`${base}/v1/ui/chat`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-sluice-ui-protocol': ver },
      body: JSON.stringify({ id: chatId('raw'), model: 'ui-server-tool', trigger: 'submit-message', messages: [userMessage] }),
    });
    const body = await raw.text();
    checkKeys(ver, body);
    const sent = body.split('\n\n').filter((f) => f.includes('"type":"data-tool-progress"')).length;
    assert.ok(sent >= 2 && sent < 20, `${sent} progress frames: coalesced, not one per update`);

    const message = await send(lib, 'ui-server-tool', ver === 'v7' ? undefined : ver);
    const tool = message.parts.find((p) => p.type === 'dynamic-tool');
    assert.ok(tool, JSON.stringify(message.parts));
    assert.equal(tool.toolName, 'count_rows');
    assert.equal(tool.state, 'output-available');
    assert.deepEqual(tool.input, { table: 'orders' });
    assert.deepEqual(tool.output, { rows: 20, args: { table: 'orders' } });
    const progress = message.parts.filter((p) => p.type === 'data-tool-progress');
    assert.equal(progress.length, 1, 'one progress part, updated in place');
    assert.equal(progress[0].id, tool.toolCallId);
    assert.deepEqual(progress[0].data, { tool: 'count_rows', done: 20, total: 20, message: 'batch 20' });
    assert.equal(textOf(message), 'The tool answered: {"args":{"table":"orders"},"rows":20}');
  });
}

test('a round with the gateway\'s tool and the client\'s: the client gets the rest', async () => {
  const message = await send(ai7, 'ui-mixed-tools');
  const server = message.parts.find((p) => p.type === 'dynamic-tool');
  const client = message.parts.find((p) => p.type === 'tool-get_weather');
  assert.equal(server?.state, 'output-available', JSON.stringify(message.parts));
  assert.equal(server.providerExecuted, true);
  assert.equal(client?.state, 'input-available', 'the client runs its own tool');
  assert.ok(!client.providerExecuted);
});
