// The admin tab: GET /admin/stats (the fleet's figures per alias and served target) and the
// cooldown counters of /metrics, refreshed every few seconds while the tab is shown. The
// admin token is asked for when the gateway wants one and kept in sessionStorage only.
import { h, clear } from './dom.js';
import { shortTarget } from './stream.js';

const $ = (id) => document.getElementById(id);
const TOKEN = 'sluice.admin';
const EVERY = 3000; // ms between refreshes

let shown = false;
let timer = 0;

export function initAdmin() {
  document.addEventListener('sluice:tab', (e) => {
    shown = e.detail === 'admin';
    if (shown) refresh();
    else clearTimeout(timer);
  });
  document.addEventListener('visibilitychange', () => {
    if (shown && !document.hidden) refresh();
  });
  $('admin-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('admin-input').value.trim();
    if (!t) return;
    sessionStorage.setItem(TOKEN, t);
    $('admin-input').value = '';
    refresh();
  });
}

function note(text) {
  $('admin-note').textContent = text;
}

async function refresh() {
  clearTimeout(timer);
  if (!shown || document.hidden) return; // a hidden tab polls nothing
  const token = sessionStorage.getItem(TOKEN);
  const r = await fetch('/admin/stats', { headers: token ? { Authorization: 'Bearer ' + token } : {} }).catch(() => null);
  const form = $('admin-form');
  if (!r) {
    note('The gateway did not answer.');
  } else if (r.status === 404) {
    form.hidden = true;
    $('stats').hidden = true;
    note('The admin API is off: this gateway has no auth.admin_token, so there is no /admin/stats to show.');
  } else if (r.status === 401) {
    if (token) sessionStorage.removeItem(TOKEN);
    form.hidden = false;
    note(token ? 'The admin token was refused.' : 'The statistics need the admin token.');
    $('admin-input').focus();
    return; // nothing to poll until a token is given
  } else if (r.ok) {
    form.hidden = true;
    $('stats').hidden = false;
    stats(await r.json());
  } else {
    note(`/admin/stats answered ${r.status}.`);
  }
  await cooldowns();
  if (shown) timer = setTimeout(refresh, EVERY);
}

function ms(q, k) {
  if (!q || !q.count) return '—';
  const v = q[k];
  return (v >= 10 ? Math.round(v) : v.toFixed(1)) + ' ms';
}

function stats(rep) {
  const body = $('stats').tBodies[0];
  clear(body);
  for (const r of rep.data) {
    body.append(h('tr', {},
      h('th', { scope: 'row' }, r.alias), h('td', {}, shortTarget(r.target) || '(none served)'),
      h('td', {}, r.requests), h('td', {}, r.errors), h('td', {}, r.fallbacks),
      h('td', {}, ms(r.ttft_ms, 'p50')), h('td', {}, ms(r.ttft_ms, 'p95')), h('td', {}, ms(r.ttft_ms, 'p99')),
      h('td', {}, ms(r.duration_ms, 'p95'))));
  }
  if (!rep.data.length) body.append(h('tr', {}, h('td', { colSpan: 9 }, 'No requests in the window yet.')));
  const replicas = rep.replicas === 1 ? '1 replica' : `${rep.replicas} replicas`;
  $('stats-caption').textContent = `Per alias and served target, the last ${rep.minutes} minutes, ${replicas}` +
    (rep.partial ? ' (Redis did not answer: this replica only)' : '');
  note(`Updated ${new Date().toLocaleTimeString()}; refreshed every ${EVERY / 1000} s.`);
}

// cooldowns reads sluice_cooldowns_total per target from the Prometheus text of /metrics
// (open like any scrape target; absent when telemetry.prometheus is off).
async function cooldowns() {
  const body = $('cooldowns').tBodies[0];
  const r = await fetch('/metrics').catch(() => null);
  clear(body);
  if (!r || !r.ok) {
    body.append(h('tr', {}, h('td', { colSpan: 2 }, 'Metrics are off (telemetry.prometheus: false).')));
    return;
  }
  const counts = new Map();
  for (const line of (await r.text()).split('\n')) {
    if (!line.startsWith('sluice_cooldowns_total{')) continue;
    const target = /sluice_target="((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? '?';
    const n = Number(line.slice(line.lastIndexOf(' ') + 1));
    counts.set(target, (counts.get(target) || 0) + n);
  }
  for (const [t, n] of [...counts].sort()) body.append(h('tr', {}, h('th', { scope: 'row' }, shortTarget(t)), h('td', {}, n)));
  if (!counts.size) body.append(h('tr', {}, h('td', { colSpan: 2 }, 'No target went into cooldown.')));
}
