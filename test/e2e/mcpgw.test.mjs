// The MCP gateway (/mcp) with the official MCP TypeScript SDK client: two servers behind it
// (server-everything over stdio as "everything", the in-repo test server over HTTP as
// "local"), two replicas behind a round-robin balancer (SLUICE_MCP_URL), keys KEY_ALL (every
// server) and KEY_ONE (local only). Run by TestMCPGatewaySDK (mcpgw_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const url = new URL(process.env.SLUICE_MCP_URL);

async function connect(key, target = url, sessionId) {
  const transport = new StreamableHTTPClientTransport(target, {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    sessionId,
  });
  const client = new Client({ name: 'sluice-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

test('tools/list is the union a key may use, named server__tool, filters applied', async () => {
  const { client } = await connect(process.env.KEY_ALL);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['everything__echo', 'everything__get-sum', 'everything__get-structured-content',
    'everything__trigger-long-running-operation', 'local__search', 'local__slow', 'local__fail', 'local__env']) {
    assert.ok(names.includes(n), `${n} missing from ${names}`);
  }
  assert.ok(!names.includes('everything__get-env'), 'the filtered tool is listed');
  const sum = tools.find((t) => t.name === 'everything__get-sum');
  assert.equal(sum.inputSchema.type, 'object');
  assert.ok(sum.inputSchema.properties.a, 'the schema came through');
  await client.close();
});

test('a call returns the server result; structuredContent passes through', async () => {
  const { client } = await connect(process.env.KEY_ALL);
  await client.listTools(); // the SDK checks structuredContent against the outputSchema listed
  const sum = await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
  assert.equal(text(sum), 'The sum of 2 and 3 is 5.');
  const sc = await client.callTool({ name: 'everything__get-structured-content', arguments: { location: 'New York' } });
  assert.ok(sc.structuredContent && typeof sc.structuredContent === 'object', JSON.stringify(sc));
  await client.close();
});

test('progress notifications reach the caller', async () => {
  const { client } = await connect(process.env.KEY_ALL);
  const seen = [];
  const r = await client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
    undefined, { onprogress: (p) => seen.push(p) });
  assert.match(text(r), /Long running operation completed/);
  // The gateway forwards the newest report a slow reader has not taken yet (a newer one
  // supersedes it: internal/tools/mcp's inbox), so a loaded machine may skip 1 or 2, never 3,
  // and never goes back.
  const steps = seen.map((p) => p.progress);
  assert.ok(steps.length >= 1 && steps.at(-1) === 3, `progress ${steps}`);
  assert.ok(steps.every((v, i) => i === 0 || v > steps[i - 1]), `progress ${steps} goes back`);
  assert.ok(seen.every((p) => p.total === 3), JSON.stringify(seen));
  await client.close();
});

test('cancelling a call (AbortSignal) ends it', async () => {
  const { client } = await connect(process.env.KEY_ALL);
  const ac = new AbortController();
  const call = client.callTool({ name: 'local__slow', arguments: {} }, undefined, {
    signal: ac.signal, onprogress: () => ac.abort('enough'),
  });
  await assert.rejects(call);
  // The session goes on: the next call answers.
  const r = await client.callTool({ name: 'local__search', arguments: { q: 'after' } });
  assert.equal(text(r), 'hits for {"q":"after"}');
  await client.close();
});

test('an error result arrives as the server sent it', async () => {
  const { client } = await connect(process.env.KEY_ALL);
  const r = await client.callTool({ name: 'local__fail', arguments: {} });
  assert.equal(r.isError, true);
  assert.equal(text(r), 'the disk is full');
  await client.close();
});

test('a filtered tool is refused as unknown', async () => {
  const { client } = await connect(process.env.KEY_ALL);
  await assert.rejects(client.callTool({ name: 'everything__get-env', arguments: {} }),
    (e) => e instanceof McpError && e.code === -32602);
  await client.close();
});

test('a key limited to one server sees and calls only its tools', async () => {
  const { client } = await connect(process.env.KEY_ONE);
  const { tools } = await client.listTools();
  assert.ok(tools.length > 0 && tools.every((t) => t.name.startsWith('local__')), tools.map((t) => t.name).join());
  await assert.rejects(client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } }),
    (e) => e instanceof McpError && e.code === -32602);
  await client.close();
});

test('a secret in a tool result is masked', async () => {
  const { client } = await connect(process.env.KEY_ONE);
  const r = await client.callTool({ name: 'local__env', arguments: {} });
  assert.ok(!text(r).includes('sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7'), text(r));
  assert.equal(text(r), 'OPENAI_API_KEY=[REDACTED:openai_key]');
  await client.close();
});

test('a session started on one replica goes on on the other', async () => {
  const a = await connect(process.env.KEY_ONE, new URL(process.env.SLUICE_MCP_A));
  const sid = a.transport.sessionId;
  assert.ok(sid);
  const b = await connect(process.env.KEY_ONE, new URL(process.env.SLUICE_MCP_B), sid);
  assert.equal(b.transport.sessionId, sid);
  const r = await b.client.callTool({ name: 'local__search', arguments: { q: 'moved' } });
  assert.equal(text(r), 'hits for {"q":"moved"}');
  await a.client.close();
  await b.client.close();
});

test('a wrong key is refused', async () => {
  await assert.rejects(connect('sk-not-a-key-000000000000000000000000'));
});
