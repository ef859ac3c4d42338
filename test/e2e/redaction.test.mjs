// Secrets quoted by a model never reach an SDK client, whatever the chunking: the mock splits
// the answer one byte per chunk and the gateway's redaction window masks each secret whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.SLUICE_URL + '/v1', apiKey: 'unused', maxRetries: 0 });
const messages = [{ role: 'user', content: 'Show me the config.' }];

// Fake secrets in realistic formats.
const openaiKey = 'sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7';
const bearer = 'Bearer abcDEF123456ghiJKL789012mnoPQR';
const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----';
const answer = `Key: ${openaiKey} then header ${bearer} and token ${jwt} and the key file:\n${pem}\nDone, all set.`;
const secrets = [openaiKey, 'abcDEF123456ghiJKL789012mnoPQR', jwt, 'MIIEowIBAAKCAQEAu1SU1LfVLPHC', 'SflKxwRJSMeKKF2QT4fw'];

function model(script) {
  return 'mock/' + script;
}

function checkMasked(text) {
  for (const s of secrets) assert.ok(!text.includes(s), `secret ${s.slice(0, 12)}… reached the client: ${text}`);
  for (const mask of ['[REDACTED:openai_key]', '[REDACTED:bearer]', '[REDACTED:jwt]', '[REDACTED:private_key]']) {
    assert.ok(text.includes(mask), `missing ${mask} in ${text}`);
  }
  assert.ok(text.startsWith('Key: '), text);
  assert.ok(text.includes(' then header '), text);
  assert.ok(text.includes(' and the key file:\n'), text);
  assert.ok(text.endsWith('\nDone, all set.'), text);
}

test('a streamed answer split one byte per chunk arrives masked', async () => {
  const stream = await client.chat.completions.create({
    model: model('text?say=' + encodeURIComponent(answer) + '&chunk=1'), messages, stream: true,
  });
  let text = '';
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.ok(chunks > 10, 'streamed in pieces');
  checkMasked(text);
});

test('a non-streamed answer arrives masked', async () => {
  const c = await client.chat.completions.create({
    model: model('text?say=' + encodeURIComponent(answer) + '&chunk=1'), messages,
  });
  checkMasked(c.choices[0].message.content);
});

test('tool-call arguments are masked and still parse', async () => {
  const args = JSON.stringify({ api_key: openaiKey, note: 'rotate it' });
  const runner = client.chat.completions.stream({
    model: model('tools?name=store_secret&args=' + encodeURIComponent(args) + '&split=1'), messages,
    tools: [{ type: 'function', function: { name: 'store_secret', parameters: { type: 'object' } } }],
  });
  const final = await runner.finalChatCompletion();
  const got = final.choices[0].message.tool_calls[0].function.arguments;
  assert.ok(!got.includes(openaiKey), got);
  const parsed = JSON.parse(got);
  assert.equal(parsed.api_key, '[REDACTED:openai_key]');
  assert.equal(parsed.note, 'rotate it');
});
