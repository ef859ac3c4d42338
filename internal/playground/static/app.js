// The playground: a chat on POST /v1/ui/chat that survives a reload (the chat id, the
// messages and the run in flight are kept in sessionStorage; a reload resumes the run with
// GET /v1/ui/chat/{id}/stream), a stop button, the model picker, the key prompt when auth is
// on, and the admin tab (admin.js).
import { h, clear } from './dom.js';
import { readFrames, runOf, newAnswer, apply, toUIMessage } from './stream.js';
import { userView, AnswerView } from './render.js';
import { api, keyNeeded, initKey } from './auth.js';
import { initAdmin } from './admin.js';

const $ = (id) => document.getElementById(id);
const store = sessionStorage; // one tab's: a reload keeps it, another tab starts afresh

const chat = {
  id: store.getItem('sluice.chat') || newChatID(),
  messages: load('sluice.messages', []),
  running: null, // {answer, view, controller} while a run is read
};
store.setItem('sluice.chat', chat.id);

function load(k, def) {
  try {
    return JSON.parse(store.getItem(k)) ?? def;
  } catch {
    return def;
  }
}

// newChatID is random without crypto.randomUUID, which only secure contexts have (a gateway
// on plain http at a LAN address is not one).
function newChatID() {
  const b = crypto.getRandomValues(new Uint8Array(12));
  return 'pg-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function save() {
  try {
    store.setItem('sluice.messages', JSON.stringify(chat.messages));
  } catch {
    // Over the storage quota (a long chat): the page goes on; a reload shows less of it.
  }
}

// pending marks a run in flight for a reload to resume: its run id once the first frame
// named it, '' before.
function setPending(p) {
  if (p) store.setItem('sluice.pending', JSON.stringify(p));
  else store.removeItem('sluice.pending');
}

// --- the transcript ---

const transcript = $('transcript');
const activity = $('activity');

function scroll() {
  // Follow the stream only when the reader is at the bottom already.
  for (const el of [transcript, activity.parentElement]) {
    if (el.scrollHeight - el.scrollTop - el.clientHeight < 120) el.scrollTop = el.scrollHeight;
  }
}

function show(m) {
  $('hint').hidden = true;
  if (m.role === 'user') {
    transcript.append(userView(m));
    return null;
  }
  const v = new AnswerView(m);
  transcript.append(v.el);
  activity.append(v.activity);
  return v;
}

function renderAll() {
  for (const el of [...transcript.querySelectorAll('.msg')]) el.remove();
  clear(activity);
  $('hint').hidden = chat.messages.length > 0;
  for (const m of chat.messages) show(m);
  transcript.scrollTop = transcript.scrollHeight;
}

// --- runs ---

function setBusy(busy) {
  $('send').disabled = busy;
  $('new-chat').disabled = busy;
  $('stop').disabled = !busy;
  $('status').textContent = busy ? 'Streaming…' : '';
}

// history is what the gateway is sent: the AI SDK's UIMessages.
function history() {
  return chat.messages.map(toUIMessage);
}

async function errorText(r) {
  try {
    const b = await r.json();
    return b?.error?.message || `HTTP ${r.status}`;
  } catch {
    return `HTTP ${r.status}`;
  }
}

// read runs one answer: open() makes the request (the POST, or a resume), whose frames are
// folded into the answer as they come. A connection that breaks before the run's end is
// resumed after the last frame read (Last-Event-ID), a few times.
async function read(model, open, quiet = false) {
  const answer = newAnswer(model);
  const controller = new AbortController();
  const view = show(answer);
  chat.running = { answer, view, controller };
  setBusy(true);
  let frame = 0;
  let last = '';
  let ended = false;
  let failed = false; // refused with an HTTP error: the run never started
  let refused = false; // a resume the gateway refused: the run may still be there for a key
  const paint = () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      view.update(answer);
      scroll();
    });
  };
  try {
    let r = await open(controller.signal);
    for (let tries = 0; ; tries++) {
      if (r.status === 204) break; // nothing to resume
      if (!r.ok) {
        const why = await errorText(r);
        if (r.status === 401) keyNeeded(why);
        refused = true;
        if (quiet) break; // a resume that cannot read the run (no key yet, another key's run)
        answer.error = why;
        answer.status = 'error';
        failed = true;
        break;
      }
      try {
        for await (const f of readFrames(r.body)) {
          if (f.id) {
            last = f.id;
            if (!answer.runId) {
              answer.runId = runOf(f.id);
              setPending({ runId: answer.runId, model });
            }
          }
          if (f.data === '[DONE]') {
            ended = true;
            break;
          }
          apply(answer, JSON.parse(f.data));
          paint();
        }
      } catch (e) {
        if (controller.signal.aborted) throw e;
      }
      if (ended || tries >= 3 || !last) break;
      r = await api(`/v1/ui/chat/${encodeURIComponent(chat.id)}/stream`, { headers: { 'Last-Event-ID': last }, signal: controller.signal });
    }
  } catch (e) {
    // The run goes on at the gateway: the answer stays pending, and a reload resumes it.
    if (!controller.signal.aborted) answer.error = `The connection to the gateway failed: ${e.message}`;
  } finally {
    cancelAnimationFrame(frame);
    chat.running = null;
    setBusy(false);
  }
  if (!ended && answer.status === 'streaming') answer.status = controller.signal.aborted ? 'stopped' : 'interrupted';
  if (answer.parts.length === 0 && !answer.error && !ended) {
    view.el.remove(); // a resume with nothing to resume
    view.activity.remove();
    $('hint').hidden = chat.messages.length > 0;
    if (!refused) setPending(null);
    return;
  }
  view.update(answer);
  scroll();
  if (ended || failed) {
    // The run is over: the answer joins the history (replacing the same message when a
    // resume replayed one already kept).
    const i = answer.id ? chat.messages.findIndex((m) => m.id === answer.id) : -1;
    if (i >= 0) chat.messages[i] = answer;
    else chat.messages.push(answer);
    save();
    setPending(null);
  }
}

function send(text) {
  const model = $('model').value;
  if (!model || chat.running) return;
  const user = { id: 'u-' + Date.now().toString(36), role: 'user', parts: [{ type: 'text', text }] };
  chat.messages.push(user);
  save();
  show(user);
  setPending({ runId: '', model });
  const body = JSON.stringify({ id: chat.id, model, trigger: 'submit-message', messages: history() });
  return read(model, (signal) => api('/v1/ui/chat', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal }));
}

// resume reads the chat's run after a reload: from its first frame (Last-Event-ID "<run>-0"
// replays a run that finished meanwhile too), or the active run when none was named yet.
function resume() {
  const p = load('sluice.pending', null);
  // No run was in flight at the reload: nothing to resume (a placeholder answer would flash
  // in the transcript until the gateway's 204).
  if (!p) return Promise.resolve();
  const headers = p && p.runId ? { 'Last-Event-ID': p.runId + '-0' } : {};
  return read(p?.model || $('model').value, (signal) =>
    api(`/v1/ui/chat/${encodeURIComponent(chat.id)}/stream`, { headers, signal }), true);
}

async function stop() {
  const run = chat.running;
  if (!run) return;
  $('status').textContent = 'Stopping…';
  // The gateway stops the run (upstream call and tool included) and ends it with abort,
  // which arrives on the stream; when it has nothing running, stop reading.
  const r = await api(`/v1/ui/chat/${encodeURIComponent(chat.id)}/stop`, { method: 'POST' }).catch(() => null);
  if (!r || r.status !== 202) run.controller.abort();
  else setTimeout(() => chat.running === run && run.controller.abort(), 5000); // abort is late: stop reading
}

// --- models ---

// loadModels fills the picker from GET /v1/models; false when it could not (no key yet).
async function loadModels() {
  const sel = $('model');
  const r = await api('/v1/models').catch(() => null);
  if (!r) return false;
  if (r.status === 401) {
    keyNeeded(await errorText(r));
    return false;
  }
  if (!r.ok) return false;
  const ids = (await r.json()).data.map((m) => m.id);
  const aliases = ids.filter((id) => !id.includes('/'));
  // Scripted targets ("sim/text?len=0&say=...") are the demos' insides: long, and reachable
  // through their alias already.
  const targets = ids.filter((id) => id.includes('/') && !id.includes('?'));
  clear(sel);
  sel.append(h('optgroup', { label: 'Aliases' }, aliases.map((id) => h('option', { value: id }, id))));
  if (targets.length) sel.append(h('optgroup', { label: 'Targets' }, targets.map((id) => h('option', { value: id }, id))));
  const want = store.getItem('sluice.model');
  sel.value = ids.includes(want) ? want : aliases.includes('demo') ? 'demo' : ids[0] || '';
  const demos = { demo: 'a tool with progress', 'demo-secret': 'a key the gateway masks', 'demo-fallback': 'a fallback', 'demo-restart': 'a restart mid-answer' };
  const have = Object.keys(demos).filter((d) => aliases.includes(d));
  if (have.length) {
    clear($('hint'));
    $('hint').append('Pick a model and send a message. Try ',
      ...have.flatMap((d, i) => [i ? ', ' : '', h('b', {}, d), ` (${demos[d]})`]), '.');
  }
  return true;
}

// --- wiring ---

function tabs() {
  const ids = ['chat', 'admin'];
  const select = (name) => {
    for (const id of ids) {
      const on = id === name;
      $('tab-' + id).setAttribute('aria-selected', String(on));
      $('tab-' + id).tabIndex = on ? 0 : -1;
      $('view-' + id).hidden = !on;
    }
    document.dispatchEvent(new CustomEvent('sluice:tab', { detail: name }));
  };
  for (const id of ids) {
    const tab = $('tab-' + id);
    tab.addEventListener('click', () => select(id));
    // Arrow keys move between tabs (the WAI-ARIA tabs pattern).
    tab.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      const next = ids[(ids.indexOf(id) + (e.key === 'ArrowRight' ? 1 : ids.length - 1)) % ids.length];
      select(next);
      $('tab-' + next).focus();
    });
  }
}

function main() {
  tabs();
  initKey(() => loadModels().then((ok) => ok && !chat.running && resume()));
  initAdmin();
  const prompt = $('prompt');
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = prompt.value.trim();
    if (!text || chat.running || !$('model').value) return;
    prompt.value = '';
    send(text);
  });
  prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $('composer').requestSubmit();
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && chat.running) stop();
  });
  $('stop').addEventListener('click', stop);
  $('model').addEventListener('change', () => store.setItem('sluice.model', $('model').value));
  $('new-chat').addEventListener('click', () => {
    if (chat.running) return;
    chat.id = newChatID();
    chat.messages = [];
    store.setItem('sluice.chat', chat.id);
    save();
    setPending(null);
    renderAll();
    prompt.focus();
  });
  renderAll();
  loadModels().then((ok) => ok && resume());
}

main();
