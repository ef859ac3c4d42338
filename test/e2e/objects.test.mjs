// The official OpenAI Node SDK against the gateway's embedded default with no provider key
// (issue 48): files and batches on the emulated batch-sim alias, audio, images and
// moderations on the simulation. The Go test (objects_test.go) starts the gateway and sets
// SLUICE_URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';

const baseURL = process.env.SLUICE_URL + '/v1';
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
// An upload and a list name no model in OpenAI's API: the gateway takes the alias from
// X-Sluice-Model (docs/files-batches.md).
const files = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'X-Sluice-Model': 'batch-sim' } });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// wav is a WAV file (8 kHz, 16-bit mono) of n silent samples.
function wav(n) {
  const b = Buffer.alloc(44 + 2 * n);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + 2 * n, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(16000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(2 * n, 40);
  return b;
}

const pngMagic = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// pngSize is the width and height of a PNG's IHDR.
function pngSize(b) {
  assert.deepEqual(b.subarray(0, 8), pngMagic, 'a PNG signature');
  assert.equal(b.subarray(12, 16).toString('latin1'), 'IHDR');
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

test('files: upload, list, retrieve, content, delete', async () => {
  const content = '{"custom_id":"x","method":"POST","url":"/v1/chat/completions","body":{"model":"batch-sim","messages":[]}}\n';
  const f = await files.files.create({ file: await toFile(Buffer.from(content), 'notes.jsonl'), purpose: 'batch' });
  assert.match(f.id, /^file-/);
  assert.equal(f.object, 'file');
  assert.equal(f.bytes, Buffer.byteLength(content));
  assert.equal(f.filename, 'notes.jsonl');
  assert.equal(f.purpose, 'batch');

  const got = await client.files.retrieve(f.id);
  assert.equal(got.id, f.id);
  assert.equal(got.bytes, f.bytes);
  assert.equal(got.filename, 'notes.jsonl');

  const ids = [];
  for await (const x of files.files.list()) ids.push(x.id);
  assert.ok(ids.includes(f.id), `list ${ids} holds ${f.id}`);

  const body = await client.files.content(f.id);
  assert.equal(await body.text(), content);

  const del = await client.files.delete(f.id);
  assert.deepEqual([del.id, del.object, del.deleted], [f.id, 'file', true]);
  await assert.rejects(client.files.retrieve(f.id), (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
  await assert.rejects(client.files.retrieve('file-nope'), (e) => e instanceof OpenAI.NotFoundError);
});

test('batch on the emulated batch-sim alias: each custom_id answered once', async () => {
  const n = 6;
  let lines = '';
  for (let i = 0; i < n; i++) {
    lines += JSON.stringify({ custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions',
      body: { model: 'batch-sim', messages: [{ role: 'user', content: `Echo number ${i}.` }] } }) + '\n';
  }
  const input = await files.files.create({ file: await toFile(Buffer.from(lines), 'batch.jsonl'), purpose: 'batch' });
  let b = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h',
    metadata: { run: 'e2e' } });
  assert.match(b.id, /^batch_/);
  assert.equal(b.object, 'batch');
  assert.equal(b.input_file_id, input.id);
  assert.equal(b.endpoint, '/v1/chat/completions');
  assert.deepEqual(b.metadata, { run: 'e2e' });
  assert.ok(['validating', 'in_progress', 'finalizing', 'completed'].includes(b.status), b.status);

  const deadline = Date.now() + 60_000;
  while (b.status !== 'completed' && Date.now() < deadline) {
    assert.ok(!['failed', 'expired', 'cancelled'].includes(b.status), `batch ${b.status}: ${JSON.stringify(b.errors)}`);
    await sleep(200);
    b = await client.batches.retrieve(b.id);
  }
  assert.equal(b.status, 'completed');
  assert.deepEqual(b.request_counts, { total: n, completed: n, failed: 0 });
  assert.match(b.output_file_id, /^file-/);

  const listed = [];
  for await (const x of files.batches.list()) listed.push(x.id);
  assert.ok(listed.includes(b.id), `batch list ${listed} holds ${b.id}`);

  const out = await (await client.files.content(b.output_file_id)).text();
  const seen = new Map();
  for (const line of out.split('\n').filter((l) => l !== '')) {
    const r = JSON.parse(line);
    seen.set(r.custom_id, (seen.get(r.custom_id) ?? 0) + 1);
    assert.equal(r.error, null);
    assert.equal(r.response.status_code, 200);
    const c = r.response.body;
    assert.equal(c.object, 'chat.completion');
    const i = r.custom_id.slice('line-'.length);
    assert.equal(c.choices[0].message.content, `Echo number ${i}.`, 'sim/echo answers its own line');
    assert.ok(c.usage.total_tokens > 0);
  }
  assert.equal(seen.size, n, `custom ids ${[...seen.keys()]}`);
  for (const [id, count] of seen) assert.equal(count, 1, `${id} answered ${count} times`);
});

test('audio transcription of a WAV names the file and its length', async () => {
  const audio = wav(8000); // one second
  const tr = await client.audio.transcriptions.create({ file: await toFile(audio, 'hello.wav'), model: 'whisper-1' });
  assert.equal(tr.text, `Simulated transcription of hello.wav (${audio.length} bytes).`);
  assert.deepEqual(tr.usage, { type: 'duration', seconds: 1 });

  const verbose = await client.audio.transcriptions.create({ file: await toFile(wav(12000), 'a.wav'), model: 'whisper-1',
    response_format: 'verbose_json' });
  assert.equal(verbose.duration, 1.5);
  assert.equal(verbose.segments.length, 1);
  assert.equal(verbose.segments[0].end, 1.5);

  const text = await client.audio.transcriptions.create({ file: await toFile(audio, 'b.wav'), model: 'whisper-1',
    response_format: 'text' });
  assert.equal(String(text).trim(), `Simulated transcription of b.wav (${audio.length} bytes).`);
});

test('audio speech is a WAV of 50 ms per word', async () => {
  const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'one two three four', response_format: 'wav' });
  const b = Buffer.from(await res.arrayBuffer());
  assert.equal(b.subarray(0, 4).toString('latin1'), 'RIFF');
  assert.equal(b.subarray(8, 16).toString('latin1'), 'WAVEfmt ');
  assert.equal(b.readUInt16LE(20), 1, 'PCM');
  assert.equal(b.readUInt32LE(24), 8000, 'sample rate');
  assert.equal(b.subarray(36, 40).toString('latin1'), 'data');
  const data = b.readUInt32LE(40);
  assert.equal(data, 4 * 400 * 2, 'four words of 400 samples of 2 bytes');
  assert.equal(b.length, 44 + data);
  assert.equal(b.readUInt32LE(4), 36 + data);
  assert.ok(b.subarray(44).some((x) => x !== 0), 'a tone, not silence');
});

test('images: generate and edit give 8x8 PNGs', async () => {
  const gen = await client.images.generate({ model: 'gpt-image-1', prompt: 'a blue square', n: 2 });
  assert.equal(gen.data.length, 2);
  for (const d of gen.data) {
    assert.deepEqual(pngSize(Buffer.from(d.b64_json, 'base64')), [8, 8]);
    assert.equal(d.revised_prompt, 'a blue square');
  }
  const src = Buffer.from(gen.data[0].b64_json, 'base64');
  const edit = await client.images.edit({ model: 'gpt-image-1', image: await toFile(src, 'in.png', { type: 'image/png' }),
    prompt: 'make it red' });
  assert.equal(edit.data.length, 1);
  assert.deepEqual(pngSize(Buffer.from(edit.data[0].b64_json, 'base64')), [8, 8]);
  assert.equal(edit.data[0].revised_prompt, 'make it red');
});

test('moderations flag violence only', async () => {
  const m = await client.moderations.create({ model: 'omni-moderation-latest', input: ['I will kill the process', 'A quiet morning'] });
  assert.equal(m.model, 'moderation', 'the model of the target that answered (sim/moderation)');
  assert.equal(m.results.length, 2);
  assert.equal(m.results[0].flagged, true);
  assert.equal(m.results[0].categories.violence, true);
  assert.equal(m.results[0].category_scores.violence, 0.92);
  assert.equal(m.results[1].flagged, false);
  assert.equal(m.results[1].categories.violence, false);
});

test('bad input is an OpenAI error the SDK raises', async () => {
  await assert.rejects(client.batches.retrieve('batch_nope'), (e) => e instanceof OpenAI.NotFoundError && e.error?.type !== undefined);
  await assert.rejects(client.moderations.create({ model: 'omni-moderation-latest', input: '' }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'input');
  await assert.rejects(client.images.generate({ model: 'gpt-image-1', prompt: 'x', n: 11 }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'n');
});
