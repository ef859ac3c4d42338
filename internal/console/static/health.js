// The Health page: GET /admin/health (targets with their cooldowns and recent error rates,
// what routing learned of each: adaptive weight, first-token EWMA, attempts in flight (issue
// 49), the state of Redis and of the request log store), refreshed every few seconds while
// shown.
// A gateway without /admin/health still has /admin/stats: its per-target requests and errors
// are shown instead, with a word on what is missing. A target is named in full, its query
// too (two scripted targets differ only there), wrapped rather than cut.
import { h, clear } from '/playground/dom.js';
import { get, APIError } from './api.js';
import { int, ms, pct, time, weight } from './fmt.js';

const $ = (id) => document.getElementById(id);
const EVERY = 5000; // ms between refreshes
let timer = 0;
let shown = false;

export function init() {
  document.addEventListener('visibilitychange', () => shown && !document.hidden && refresh());
}

export function show() {
  shown = true;
  refresh();
}

export function hide() {
  shown = false;
  clearTimeout(timer);
}

function note(text) {
  $('health-note').textContent = text;
}

const states = {
  ok: 'ok',
  unreachable: 'unreachable',
  off: 'off (not configured)',
};

async function refresh() {
  clearTimeout(timer);
  if (!shown || document.hidden) return; // a hidden page polls nothing
  try {
    health(await get('/admin/health'));
  } catch (err) {
    if (err instanceof APIError && err.status === 404) await stats();
    else note(err.message);
  }
  if (shown) timer = setTimeout(refresh, EVERY);
}

function state(dl, pairs) {
  clear(dl);
  for (const [k, v] of pairs) dl.append(h('div', { 'data-state': v === 'ok' ? 'ok' : v === 'unreachable' ? 'error' : 'muted' }, h('dt', {}, k), h('dd', {}, states[v] || v || '—')));
}

function health(rep) {
  state($('health-state'), [['Redis', rep.redis], ['Request log', rep.logs]]);
  const body = $('health-table').tBodies[0];
  clear(body);
  $('health-caption').textContent = 'Targets: cooldowns, recent error rates and what routing learned';
  for (const t of rep.targets || []) {
    const cooling = t.cooling_down ? `cooling down${t.until ? ' until ' + time(t.until) : ''}` : 'serving';
    body.append(h('tr', { 'data-state': t.cooling_down ? 'error' : 'ok' },
      h('th', { scope: 'row', className: 'target' }, t.target), h('td', {}, cooling), h('td', {}, int(t.requests)), h('td', {}, pct(t.error_rate)),
      h('td', {}, weight(t.weight)), h('td', {}, t.ewma_ms ? ms(t.ewma_ms) : '—'), h('td', {}, int(t.in_flight))));
  }
  if (!(rep.targets || []).length) body.append(h('tr', {}, h('td', { colSpan: 7 }, 'No target has served a request yet.')));
  note(`Updated ${time(new Date().toISOString())}; refreshed every ${EVERY / 1000} s.`);
}

// stats sums /admin/stats per served target: a gateway without /admin/health.
async function stats() {
  let rep;
  try {
    rep = await get('/admin/stats');
  } catch (err) {
    note(err.message);
    return;
  }
  state($('health-state'), [['Redis', 'not reported'], ['Request log', 'not reported']]);
  const by = new Map();
  for (const r of rep.data || []) {
    if (!r.target) continue;
    const t = by.get(r.target) || { requests: 0, errors: 0 };
    t.requests += r.requests || 0;
    t.errors += r.errors || 0;
    by.set(r.target, t);
  }
  const body = $('health-table').tBodies[0];
  clear(body);
  $('health-caption').textContent = `Targets over the last ${rep.minutes} minutes (from /admin/stats)`;
  for (const [target, t] of [...by].sort()) {
    body.append(h('tr', {}, h('th', { scope: 'row', className: 'target' }, target), h('td', {}, 'not reported'),
      h('td', {}, int(t.requests)), h('td', {}, pct(t.requests ? t.errors / t.requests : null)),
      h('td', {}, '—'), h('td', {}, '—'), h('td', {}, '—')));
  }
  if (!by.size) body.append(h('tr', {}, h('td', { colSpan: 7 }, 'No target has served a request yet.')));
  note('This gateway has no /admin/health: cooldowns and the state of Redis and the request log are not shown.');
}
