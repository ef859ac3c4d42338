// The official OpenAI Node SDK's Realtime WebSocket clients against the gateway's
// GET /v1/realtime (issue 48, docs/realtime.md): the embedded default with auth on, whose
// gpt-realtime alias is served by the simulation's echo with no provider key. The Go test
// (realtime_test.go) starts the gateway over TLS (the SDK speaks only wss:) and sets
// SLUICE_URL, SLUICE_ADMIN (the admin token) and NODE_EXTRA_CA_CERTS (its certificate).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { OpenAIRealtimeError } from 'openai/realtime/index';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { OpenAIRealtimeWebSocket } from 'openai/realtime/websocket';
import WebSocket from 'ws';

const base = process.env.SLUICE_URL;
const baseURL = base + '/v1';
const model = 'gpt-realtime';
const wrongKey = 'sk-sluice-wrong-0123456789abcdef';
// A key of OpenAI's shape, planted in the text the echo answers: the built-in openai_key
// detector masks it however the deltas split it.
const secret = 'sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7';

let key, keyID; // a virtual key made through the admin API, for gpt-realtime only
const usages = []; // each session's response.done usage, for the request log's records
const admin = (path) => fetch(base + path, { headers: { Authorization: 'Bearer ' + process.env.SLUICE_ADMIN } });

before(async () => {
  const res = await fetch(base + '/admin/keys', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + process.env.SLUICE_ADMIN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'realtime-e2e', models: [model] }),
  });
  const body = await res.json();
  assert.ok(res.ok, `creating a key: ${res.status} ${JSON.stringify(body)}`);
  assert.match(body.key, /^sk-sluice-/);
  key = body.key;
  keyID = body.id;
});

const client = (apiKey) => new OpenAI({ baseURL, apiKey, maxRetries: 0 });

// turn runs one session's turn as an application does: once the session is created it sends
// session.update, then after session.updated a user text and response.create; it resolves with
// every server event up to the response.done, and rejects with the SDK's error event.
function turn(rt, text, session) {
  return new Promise((resolve, reject) => {
    const events = [];
    rt.on('error', reject);
    rt.on('event', (e) => events.push(e));
    rt.on('session.created', () => rt.send({ type: 'session.update', session }));
    rt.on('session.updated', () => {
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      rt.send({ type: 'response.create' });
    });
    rt.on('response.done', (e) => {
      usages.push(e.response.usage);
      resolve(events);
    });
  });
}

// closed closes the session from the client and resolves with the close code the gateway sent.
function closed(rt) {
  return new Promise((resolve) => {
    rt.socket.addEventListener('close', (e) => resolve(e.code), { once: true });
    rt.close();
  });
}

// checkEcho checks one turn's events: session.created first, the session.update echoed, the
// text in more than one delta of the given type, its .done, and a response.done with the
// whole text and its usage.
function checkEcho(events, text, delta, session) {
  const types = events.map((e) => e.type);
  assert.equal(types[0], 'session.created', `events ${types}`);
  assert.deepEqual(events.find((e) => e.type === 'session.updated')?.session, session);
  assert.ok(!types.includes('error'), `events ${types}`);
  const deltas = events.filter((e) => e.type === delta);
  assert.ok(deltas.length > 1, `${delta}: ${deltas.length} events of ${types}`);
  assert.equal(deltas.map((e) => e.delta).join(''), text);
  assert.equal(events.find((e) => e.type === delta.replace(/\.delta$/, '.done'))?.text, text);
  const done = events.at(-1);
  assert.equal(done.type, 'response.done');
  assert.equal(done.response.status, 'completed');
  assert.equal(done.response.output[0].content[0].text, text);
  const { usage } = done.response;
  assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0, `usage ${JSON.stringify(usage)}`);
  assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens);
}

test('the Node client (openai/realtime/ws): the key in Authorization, the GA events echoed, usage in response.done', async () => {
  const rt = new OpenAIRealtimeWS({ model }, client(key));
  assert.equal(rt.url.protocol, 'wss:');
  assert.equal(rt.url.pathname, '/v1/realtime');
  const session = { type: 'realtime', output_modalities: ['text'], instructions: 'Echo the user.' };
  const text = 'Hello from the openai SDK over the gateway.';
  checkEcho(await turn(rt, text, session), text, 'response.output_text.delta', session);
  assert.equal(await closed(rt), 1000);
});

test('the Node client with OpenAI-Beta: realtime=v1: the beta event names', async () => {
  const rt = new OpenAIRealtimeWS({ model, options: { headers: { 'OpenAI-Beta': 'realtime=v1' } } }, client(key));
  const session = { modalities: ['text'], instructions: 'Echo the user.' };
  const text = 'The beta names, response.text.delta.';
  const events = await turn(rt, text, session);
  checkEcho(events, text, 'response.text.delta', session);
  assert.ok(!events.some((e) => e.type === 'response.output_text.delta'));
  assert.equal(await closed(rt), 1000);
});

test('a secret planted in the echo reaches the SDK masked, in the deltas and the whole texts', async () => {
  const rt = new OpenAIRealtimeWS({ model }, client(key));
  const events = await turn(rt, `The key is ${secret} and more.`, { type: 'realtime', output_modalities: ['text'] });
  assert.ok(!JSON.stringify(events).includes(secret), 'the secret reached the client');
  const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(text, 'The key is [REDACTED:openai_key] and more.');
  assert.equal(events.find((e) => e.type === 'response.output_text.done').text, text);
  assert.equal(events.at(-1).response.output[0].content[0].text, text);
  assert.equal(await closed(rt), 1000);
});

test('the browser client (openai/realtime/websocket): the key in the openai-insecure-api-key subprotocol', async () => {
  // Node 20 has no WebSocket global: the pinned ws stands in for the browser's, and records
  // the subprotocols the SDK offers.
  let offered;
  globalThis.WebSocket = class extends WebSocket {
    constructor(url, protocols) {
      offered = protocols;
      super(url, protocols);
    }
  };
  try {
    const rt = new OpenAIRealtimeWebSocket({ model, dangerouslyAllowBrowser: true }, client(key));
    const session = { type: 'realtime', output_modalities: ['text'] };
    const text = 'A browser cannot set headers.';
    checkEcho(await turn(rt, text, session), text, 'response.output_text.delta', session);
    assert.deepEqual(offered, ['realtime', 'openai-insecure-api-key.' + key]);
    assert.equal(rt.socket.protocol, 'realtime', 'the gateway answers realtime, never the key');
    assert.equal(await closed(rt), 1000);
  } finally {
    delete globalThis.WebSocket;
  }
});

test('a wrong key is refused before the upgrade: the SDK reports the 401', async () => {
  const rt = new OpenAIRealtimeWS({ model }, client(wrongKey));
  const err = await new Promise((resolve) => {
    rt.on('error', resolve);
    rt.on('session.created', () => resolve(new Error('the session was opened')));
  });
  assert.ok(err instanceof OpenAIRealtimeError, `got ${err}`);
  assert.match(err.message, /Unexpected server response: 401/);
  assert.ok(!err.message.includes(wrongKey));
});

// refusal opens a plain ws connection and resolves with the HTTP answer that refused it.
function refusal(url, protocols, options) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, options);
    ws.on('open', () => reject(new Error('the session was opened')));
    ws.on('error', reject);
    ws.on('unexpected-response', (_req, res) => {
      const socket = res.socket; // ws leaves the refused handshake's connection to this listener
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (b) => (body += b));
      res.on('end', () => {
        socket.destroy();
        resolve({ status: res.statusCode, body });
      });
    });
  });
}

test('the refusals are in OpenAI\'s error shape and never carry the key', async () => {
  const url = base.replace(/^https:/, 'wss:') + '/v1/realtime?model=' + model;
  const cases = [
    { why: 'a wrong bearer', protocols: [], headers: { Authorization: 'Bearer ' + wrongKey }, status: 401, code: 'invalid_api_key' },
    { why: 'a wrong key in the subprotocol', protocols: ['realtime', 'openai-insecure-api-key.' + wrongKey], headers: {}, status: 401, code: 'invalid_api_key' },
    { why: 'no key', protocols: ['realtime'], headers: {}, status: 401, code: 'invalid_api_key' },
  ];
  for (const c of cases) {
    const { status, body } = await refusal(url, c.protocols, { headers: c.headers });
    assert.equal(status, c.status, `${c.why}: ${body}`);
    assert.equal(JSON.parse(body).error.code, c.code, `${c.why}: ${body}`);
    assert.ok(!body.includes(wrongKey), `${c.why}: the key in ${body}`);
  }
  // The key may use gpt-realtime only: another alias is refused for it.
  const other = await refusal(url.replace(model, 'default'), [], { headers: { Authorization: 'Bearer ' + key } });
  assert.equal(other.status, 403, other.body);
  assert.ok(!other.body.includes(key));
});

test('each session is one record of the request log, with its usage and its redaction', async () => {
  // A session's record is written when it ends: the closes above end them, the log's writer
  // stores them a moment later.
  const path = `/admin/logs?key=${keyID}&alias=${model}&status=101`;
  let data = [];
  for (const deadline = Date.now() + 30_000; data.length < usages.length && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 100));
    const res = await admin(path);
    assert.equal(res.status, 200);
    ({ data } = await res.json());
  }
  assert.equal(data.length, usages.length, JSON.stringify(data));
  for (const r of data) {
    assert.equal(r.wire, 'realtime');
    assert.equal(r.key_id, keyID);
  }
  const pairs = (xs) => xs.map((x) => `${x[0]}/${x[1]}`).sort();
  assert.deepEqual(pairs(data.map((r) => [r.tokens_in, r.tokens_out])), pairs(usages.map((u) => [u.input_tokens, u.output_tokens])));
  assert.equal(data.filter((r) => r.redactions > 0).length, 1, 'the session with the planted secret');
  assert.ok(!JSON.stringify(data).includes(secret) && !JSON.stringify(data).includes(key));
});
