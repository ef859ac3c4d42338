// The Keys page: the virtual keys (GET /admin/keys) with today's and this month's spend
// against their budgets (GET /admin/usage per key), a form to create (POST) or edit (PATCH)
// one, and revoke (DELETE) with a confirmation in place. A new key's secret is in the
// creation's answer only: it is shown once, and dropped from the page when dismissed.
// The form's team is one of the caller's: required for all but admin, since the admin API
// puts a key of anyone else into one of their teams only (auth.Into).
import { h, clear } from '/playground/dom.js';
import { get, call, query, admin, teams } from './api.js';
import { int, usd, time, day, localInput, fromLocalInput } from './fmt.js';

const $ = (id) => document.getElementById(id);
let editing = null; // the key being edited; null: a new key
let loaded = false;

export function init() {
  $('key-new').addEventListener('click', () => openForm(null));
  $('key-cancel').addEventListener('click', closeForm);
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    save();
  });
}

export function show() {
  if (!loaded) load();
}

export function hide() {}

function note(text) {
  $('key-note').textContent = text;
}

// load reads the keys again; said is what the last change did, kept in the note.
async function load(said = '') {
  note(said || 'Loading…');
  const today = new Date();
  const d = day(today);
  const month = d.slice(0, 8) + '01';
  let list, daily, monthly;
  try {
    [list, daily, monthly] = await Promise.all([
      get('/admin/keys'),
      spend(d, d),
      spend(month, d),
    ]);
  } catch (err) {
    note(err.message);
    return;
  }
  loaded = true;
  const body = $('key-table').tBodies[0];
  clear(body);
  for (const k of list.data || []) body.append(row(k, daily, monthly));
  if (!(list.data || []).length) body.append(h('tr', {}, h('td', { colSpan: 9 }, 'No key yet: the gateway is open, or keys live in the configuration file only.')));
  const n = (list.data || []).length;
  note(`${said ? said + ' ' : ''}${int(n)} key${n === 1 ? '' : 's'}.`);
}

// spend is the cost per key id over the UTC days from..to; empty when the usage account
// does not answer (the table shows no spend rather than no keys).
async function spend(from, to) {
  try {
    const r = await get('/admin/usage?' + query({ from, to, group_by: 'key' }));
    return new Map((r.data || []).map((l) => [l.key, l.cost_usd || 0]));
  } catch {
    return null;
  }
}

// budget is spend against a cap: a meter when there is a cap.
function budget(spent, cap) {
  if (spent === undefined) return '—';
  if (!cap) return h('span', {}, usd(spent), h('span', { className: 'muted' }, ' (no cap)'));
  const over = spent >= cap;
  return h('span', { className: over ? 'over' : '' },
    h('meter', { min: 0, max: cap, value: Math.min(spent, cap), low: cap * 0.8, high: cap * 0.95, optimum: 0 }),
    ` ${usd(spent)} of ${usd(cap)}`);
}

function limits(k) {
  const out = [];
  if (k.rpm) out.push(`${int(k.rpm)} rpm`);
  if (k.tpm) out.push(`${int(k.tpm)} tpm`);
  if (k.tool_calls_per_minute) out.push(`${int(k.tool_calls_per_minute)} tool calls/min`);
  if (k.mcp) out.push(`MCP: ${(k.mcp.servers || []).join(', ') || 'all'}${(k.mcp.tools || []).length ? ' (' + k.mcp.tools.join(', ') + ')' : ''}`);
  return out.join(' · ') || 'none';
}

function expiry(k) {
  if (!k.expires_at) return 'never';
  return new Date(k.expires_at) <= new Date() ? `expired ${time(k.expires_at)}` : time(k.expires_at);
}

function row(k, daily, monthly) {
  const fromFile = k.source === 'config';
  const actions = h('td', { className: 'actions writer' });
  const tr = h('tr', { 'data-id': k.id },
    h('th', { scope: 'row' }, k.name || '(no name)', fromFile ? h('span', { className: 'badge' }, 'config') : null),
    h('td', {}, h('code', {}, k.id)),
    h('td', {}, k.team || '—'),
    h('td', { className: 'models' }, (k.models || []).join(', ')),
    h('td', {}, limits(k)),
    h('td', {}, daily ? budget(daily.get(k.id) || 0, k.budget?.daily_usd) : '—'),
    h('td', {}, monthly ? budget(monthly.get(k.id) || 0, k.budget?.monthly_usd) : '—'),
    h('td', {}, expiry(k)),
    actions);
  const normal = () => {
    clear(actions);
    const title = fromFile ? 'Defined in the configuration file: change it there.' : undefined;
    const edit = h('button', { type: 'button', className: 'quiet', disabled: fromFile, title }, 'Edit');
    const revoke = h('button', { type: 'button', className: 'quiet danger', disabled: fromFile, title }, 'Revoke');
    edit.addEventListener('click', () => openForm(k));
    revoke.addEventListener('click', confirm);
    actions.append(edit, revoke);
  };
  // The confirmation is in place, not window.confirm: it can be read and reached by keyboard.
  const confirm = () => {
    clear(actions);
    const yes = h('button', { type: 'button', className: 'danger' }, 'Yes, revoke');
    const no = h('button', { type: 'button', className: 'quiet' }, 'Keep');
    yes.addEventListener('click', () => revoke(k, actions, normal));
    no.addEventListener('click', normal);
    actions.append(h('span', {}, `Revoke ${k.name || k.id}? `), yes, no);
    no.focus();
  };
  normal();
  return tr;
}

async function revoke(k, actions, back) {
  try {
    await call('DELETE', '/admin/keys/' + encodeURIComponent(k.id));
  } catch (err) {
    back();
    note(`Revoking ${k.name || k.id} failed: ${err.message}`);
    return;
  }
  load(`Revoked ${k.name || k.id}: every replica refuses it within seconds.`);
}

const list = (s) => (s || '').split(',').map((x) => x.trim()).filter(Boolean);

// teamPicker fills the form's team list with the caller's teams, and the key's own (k) if
// it is in another (admin moved it): admin may leave a key without a team, the others
// must pick one.
async function teamPicker(k) {
  const sel = $('key-team');
  const names = [...(await teams())];
  if (k?.team && !names.includes(k.team)) names.unshift(k.team);
  clear(sel);
  const anyone = admin();
  if (anyone) sel.append(h('option', { value: '' }, '(no team)'));
  else if (names.length !== 1) sel.append(h('option', { value: '', disabled: true }, names.length ? 'Pick a team' : 'You are in no team'));
  for (const n of names) sel.append(h('option', { value: n }, n));
  sel.required = !anyone;
  sel.value = k ? k.team || '' : (!anyone && names.length === 1 ? names[0] : '');
}

async function openForm(k) {
  editing = k;
  const f = $('key-form');
  f.reset();
  $('key-error').textContent = '';
  $('key-form-title').textContent = k ? `Edit ${k.name || k.id}` : 'New key';
  $('key-save').textContent = k ? 'Save' : 'Create';
  await teamPicker(k);
  if (k) {
    const e = f.elements;
    e.name.value = k.name || '';
    e.models.value = (k.models || []).join(', ');
    e.rpm.value = k.rpm || '';
    e.tpm.value = k.tpm || '';
    e.daily_usd.value = k.budget?.daily_usd || '';
    e.monthly_usd.value = k.budget?.monthly_usd || '';
    e.expires_at.value = k.expires_at ? localInput(new Date(k.expires_at)) : '';
    e.guardrails.value = (k.guardrails || []).join(', ');
    e.mcp_servers.value = (k.mcp?.servers || []).join(', ');
    e.mcp_tools.value = (k.mcp?.tools || []).join(', ');
    e.tool_calls_per_minute.value = k.tool_calls_per_minute || '';
    e.metadata.value = Object.entries(k.metadata || {}).map(([n, v]) => `${n}=${v}`).join('\n');
    e.capture.value = k.capture || '';
  }
  f.hidden = false;
  f.elements.name.focus();
}

function closeForm() {
  $('key-form').hidden = true;
  editing = null;
}

// body is the form as the admin API's KeyInput. Editing sends every member (the form shows
// them all); an emptied expiry or MCP access is removed (null).
function body() {
  const e = $('key-form').elements;
  const num = (el) => (el.value === '' ? 0 : Number(el.value));
  const b = {
    name: e.name.value.trim(),
    rpm: num(e.rpm),
    tpm: num(e.tpm),
    budget: { daily_usd: num(e.daily_usd), monthly_usd: num(e.monthly_usd) },
    guardrails: list(e.guardrails.value),
    tool_calls_per_minute: num(e.tool_calls_per_minute),
    capture: e.capture.value, // '': the alias's choice, else logs.capture
    metadata: {},
  };
  // The team goes when it is chosen or changed: an edit that leaves it alone asks the
  // policy nothing about teams. Emptied on an edit, it takes the key out of its team (admin
  // only: a non-admin's key stays in one of their teams, and the admin API's 403 says so).
  if (editing ? (editing.team || '') !== e.team.value : e.team.value) b.team = e.team.value || null;
  const models = list(e.models.value);
  if (models.length) b.models = models;
  else if (!editing) b.models = ['*'];
  const expires = fromLocalInput(e.expires_at.value);
  if (expires) b.expires_at = expires;
  else if (editing) b.expires_at = null;
  const servers = list(e.mcp_servers.value);
  const tools = list(e.mcp_tools.value);
  if (servers.length || tools.length) b.mcp = { servers, tools };
  else if (editing) b.mcp = null;
  for (const line of e.metadata.value.split('\n')) {
    const t = line.trim();
    if (!t) continue;
    const i = t.indexOf('=');
    if (i <= 0) throw new Error(`Metadata is name=value, one pair a line: "${t}" is not one.`);
    b.metadata[t.slice(0, i).trim()] = t.slice(i + 1).trim();
  }
  return b;
}

async function save() {
  let b;
  try {
    b = body();
  } catch (err) {
    $('key-error').textContent = err.message;
    return;
  }
  const k = editing;
  let r;
  try {
    r = k ? await call('PATCH', '/admin/keys/' + encodeURIComponent(k.id), b) : await call('POST', '/admin/keys', b);
  } catch (err) {
    $('key-error').textContent = err.param ? `${err.param}: ${err.message}` : err.message;
    return;
  }
  closeForm();
  if (!k) secret(r);
  load(k ? `Saved ${r.name || r.id}.` : `Created ${r.name || r.id}.`);
}

// secret shows a new key's secret, once: dismissing it removes it from the page, and the
// gateway keeps only its hash.
function secret(created) {
  const el = $('key-secret');
  clear(el);
  const value = h('code', { id: 'key-secret-value' }, created.key);
  const copy = h('button', { type: 'button', className: 'quiet' }, 'Copy');
  const done = h('button', { type: 'button' }, 'I have saved it');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      copy.textContent = 'Copied';
    } catch {
      // No clipboard outside a secure context (plain http on a LAN address): select it.
      getSelection().selectAllChildren(value);
    }
  });
  done.addEventListener('click', () => {
    clear(el);
    el.hidden = true;
  });
  el.append(h('p', {}, `The key ${created.name || created.id} is shown this once: copy it now. The gateway keeps only its hash.`),
    h('div', { className: 'row' }, value, copy, done));
  el.hidden = false;
  done.focus();
}
