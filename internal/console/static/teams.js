// The Teams page (issue 37): the teams (GET /admin/teams) with today's and this month's
// spend against their budgets (GET /admin/usage grouped by team), a form to create (POST)
// or edit (PATCH) one's models, limits and budget, and delete (DELETE) with a confirmation
// in place; the admin API refuses to delete a team that still has keys (409), and the
// page says so. Config teams are read-only.
import { h, clear } from '/playground/dom.js';
import { get, call, query, forgetTeams } from './api.js';
import { int, usd, day } from './fmt.js';

const $ = (id) => document.getElementById(id);
let editing = null; // the team being edited; null: a new team
let loaded = false;

export function init() {
  $('team-new').addEventListener('click', () => openForm(null));
  $('team-cancel').addEventListener('click', closeForm);
  $('team-form').addEventListener('submit', (e) => {
    e.preventDefault();
    save();
  });
}

export function show() {
  if (!loaded) load();
}

export function hide() {}

function note(text) {
  $('team-note').textContent = text;
}

async function load(said = '') {
  note(said || 'Loading…');
  const d = day(new Date());
  let list, daily, monthly;
  try {
    [list, daily, monthly] = await Promise.all([get('/admin/teams'), spend(d, d), spend(d.slice(0, 8) + '01', d)]);
  } catch (err) {
    note(err.message);
    return;
  }
  loaded = true;
  const body = $('team-table').tBodies[0];
  clear(body);
  const teams = list.data || [];
  for (const t of teams) body.append(row(t, daily, monthly));
  if (!teams.length) body.append(h('tr', {}, h('td', { colSpan: 7 }, 'No team yet.')));
  const none = daily?.get('');
  if (none !== undefined) body.append(h('tr', { className: 'muted' }, h('th', { scope: 'row' }, '(keys without a team)'),
    h('td', {}, ''), h('td', {}, ''), h('td', {}, usd(none)), h('td', {}, usd(monthly?.get('') || 0)), h('td', {}, ''), h('td', {}, '')));
  note(`${said ? said + ' ' : ''}${int(teams.length)} team${teams.length === 1 ? '' : 's'}.`);
}

// spend is the cost per team over the UTC days from..to (usage grouped by team); null when
// the account does not answer.
async function spend(from, to) {
  try {
    const r = await get('/admin/usage?' + query({ from, to, group_by: 'team' }));
    return new Map((r.data || []).map((l) => [l.team, l.cost_usd || 0]));
  } catch {
    return null;
  }
}

function budget(spent, cap) {
  if (!cap) return h('span', {}, usd(spent), h('span', { className: 'muted' }, ' (no cap)'));
  return h('span', { className: spent >= cap ? 'over' : '' },
    h('meter', { min: 0, max: cap, value: Math.min(spent, cap), low: cap * 0.8, high: cap * 0.95, optimum: 0 }),
    ` ${usd(spent)} of ${usd(cap)}`);
}

function limits(t) {
  const out = [];
  if (t.rpm) out.push(`${int(t.rpm)} rpm`);
  if (t.tpm) out.push(`${int(t.tpm)} tpm`);
  if (t.mcp) out.push(`MCP: ${(t.mcp.servers || []).join(', ') || 'all'}`);
  return out.join(' · ') || 'none';
}

function row(t, daily, monthly) {
  const fromFile = t.source === 'config';
  const actions = h('td', { className: 'actions admin-only' });
  const tr = h('tr', { 'data-id': t.id },
    h('th', { scope: 'row' }, t.name, fromFile ? h('span', { className: 'badge' }, 'config') : null),
    h('td', { className: 'models' }, (t.models || []).join(', ')),
    h('td', {}, limits(t)),
    h('td', {}, daily ? budget(daily.get(t.name) || 0, t.budget?.daily_usd) : '—'),
    h('td', {}, monthly ? budget(monthly.get(t.name) || 0, t.budget?.monthly_usd) : '—'),
    h('td', {}, new Date(t.created_at).getFullYear() > 1 ? day(new Date(t.created_at)) : '—'),
    actions);
  const normal = () => {
    clear(actions);
    const title = fromFile ? 'Defined in the configuration file: change it there.' : undefined;
    const edit = h('button', { type: 'button', className: 'quiet', disabled: fromFile, title }, 'Edit');
    const del = h('button', { type: 'button', className: 'quiet danger', disabled: fromFile, title }, 'Delete');
    edit.addEventListener('click', () => openForm(t));
    del.addEventListener('click', confirm);
    actions.append(edit, del);
  };
  const confirm = () => {
    clear(actions);
    const yes = h('button', { type: 'button', className: 'danger' }, 'Yes, delete');
    const no = h('button', { type: 'button', className: 'quiet' }, 'Keep');
    yes.addEventListener('click', () => remove(t, normal));
    no.addEventListener('click', normal);
    actions.append(h('span', {}, `Delete ${t.name}? `), yes, no);
    no.focus();
  };
  normal();
  return tr;
}

async function remove(t, back) {
  try {
    await call('DELETE', '/admin/teams/' + encodeURIComponent(t.id));
  } catch (err) {
    back();
    note(`Deleting ${t.name} failed: ${err.message}`);
    return;
  }
  forgetTeams(); // the key form offers it no more
  load(`Deleted ${t.name}.`);
}

const list = (s) => (s || '').split(',').map((x) => x.trim()).filter(Boolean);

function openForm(t) {
  editing = t;
  const f = $('team-form');
  f.reset();
  $('team-error').textContent = '';
  $('team-form-title').textContent = t ? `Edit ${t.name}` : 'New team';
  $('team-save').textContent = t ? 'Save' : 'Create';
  const e = f.elements;
  e.team_name.disabled = !!t; // a team's name never changes
  if (t) {
    e.team_name.value = t.name;
    e.team_models.value = (t.models || []).join(', ');
    e.team_rpm.value = t.rpm || '';
    e.team_tpm.value = t.tpm || '';
    e.team_daily_usd.value = t.budget?.daily_usd || '';
    e.team_monthly_usd.value = t.budget?.monthly_usd || '';
  }
  f.hidden = false;
  (t ? e.team_models : e.team_name).focus();
}

function closeForm() {
  $('team-form').hidden = true;
  editing = null;
}

async function save() {
  const e = $('team-form').elements;
  const num = (el) => (el.value === '' ? 0 : Number(el.value));
  const b = { rpm: num(e.team_rpm), tpm: num(e.team_tpm), budget: { daily_usd: num(e.team_daily_usd), monthly_usd: num(e.team_monthly_usd) } };
  const models = list(e.team_models.value);
  if (models.length) b.models = models;
  const t = editing;
  if (!t) b.name = e.team_name.value.trim();
  let r;
  try {
    r = t ? await call('PATCH', '/admin/teams/' + encodeURIComponent(t.id), b) : await call('POST', '/admin/teams', b);
  } catch (err) {
    $('team-error').textContent = err.param ? `${err.param}: ${err.message}` : err.message;
    return;
  }
  closeForm();
  forgetTeams(); // the key form offers a new team at once
  load(t ? `Saved ${r.name}.` : `Created ${r.name}.`);
}
