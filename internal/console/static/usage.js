// The Usage page: GET /admin/usage over a range of UTC days, by day or hour, per key, alias,
// target (the provider/model served), team or key metadata field: charts of requests,
// tokens, cost, the prompt cache's hit ratio, errors and p95 TTFT, the spend per team, the
// totals, and a table per group; of one key or team, or of all the caller sees (the admin
// API scopes a team_admin or viewer to their teams, a member to their own keys).
//
// The API answers one shape whatever its source (issue 50, api/openapi.yaml UsageReport):
// lines with a time bucket, a group and the sums (input_tokens, output_tokens,
// cache_read_tokens, cost_usd, errors...), and a total. An answer whose `bucket` is a time
// width (hour, day: the request log's rollups) is drawn a line per group over time; one
// without (the usage account alone) as bars per group, and a second call grouped by the
// bucket gives the totals over time.
import { h, clear } from '/playground/dom.js';
import { get, query, APIError } from './api.js';
import { int, usd, ms, pct, day } from './fmt.js';
import { lines, bars } from './chart.js';

const $ = (id) => document.getElementById(id);
const TOP = 7; // series drawn; the rest are summed as "other"

let seq = 0;
let drawn = false;

// input, output and reads are a line's (or a total's) prompt tokens, answer tokens and
// prompt tokens read from the provider's cache (issue 46).
const input = (l) => l.input_tokens;
const output = (l) => l.output_tokens;
const reads = (l) => l.cache_read_tokens;

// A metric sums over lines (sum), divides two sums (ratio: num over den, as the cache-hit
// ratio of a bucket is its cache reads over its prompt tokens), or is one line's figure (a
// p95 does not add up).
const metrics = [
  { title: 'Requests', of: (l) => l.requests, fmt: int, sum: true, whole: true },
  { title: 'Tokens (input + output)', of: (l) => (input(l) || 0) + (output(l) || 0), fmt: int, sum: true, whole: true },
  { title: 'Cost', of: (l) => l.cost_usd, fmt: usd, sum: true },
  { title: 'Cache-hit ratio (cache reads / input tokens)', num: reads, den: input, fmt: pct, ratio: true },
  { title: 'Errors', of: (l) => l.errors, fmt: int, sum: true, whole: true },
  { title: 'TTFT p95', of: (l) => l.p95_first_token_ms, fmt: ms, sum: false },
];

const given = (v) => v !== undefined && v !== null;

// has says whether any line carries m's figure.
function has(m, data) {
  return data.some((l) => given(m.ratio ? m.num(l) : m.of(l)));
}

// value is m's figure over lines ls (null: none): the sum, the ratio of the sums (null
// without input tokens), or the last line's figure.
function value(m, ls) {
  if (m.ratio) {
    const den = ls.reduce((n, l) => n + (m.den(l) || 0), 0);
    return den > 0 ? ls.reduce((n, l) => n + (m.num(l) || 0), 0) / den : null;
  }
  const vs = ls.map(m.of).filter(given);
  if (!vs.length) return null;
  return m.sum ? vs.reduce((a, b) => a + b, 0) : vs[vs.length - 1];
}

// summed adds up the lines' counters (a group's, in the table).
function summed(data) {
  const t = {};
  for (const l of data) {
    for (const [k, v] of Object.entries(l)) {
      if (typeof v === 'number' && k !== 'p95_first_token_ms') t[k] = (t[k] || 0) + v;
    }
  }
  return t;
}

export function init() {
  const f = $('usage-form');
  const to = new Date();
  f.elements.to.value = day(to);
  f.elements.from.value = day(new Date(to.getTime() - 13 * 86_400_000));
  f.addEventListener('submit', (e) => {
    e.preventDefault();
    load();
  });
  f.elements.group.addEventListener('change', () => {
    $('usage-meta-label').hidden = f.elements.group.value !== 'meta';
  });
}

export function show() {
  if (!drawn) load();
}

export function hide() {}

function note(text) {
  $('usage-note').textContent = text;
}

// params are the form's: group_by names the metadata field as meta.<field>.
function params() {
  const f = Object.fromEntries(new FormData($('usage-form')));
  const group = f.group === 'meta' ? 'meta.' + (f.meta || '').trim() : f.group;
  return { from: f.from, to: f.to, bucket: f.bucket, key: f.key, team: (f.team || '').trim(), group };
}

// timeOf is a line's time bucket (RFC 3339).
const timeOf = (l) => l.bucket;

// groupOf is a line's group: the value of the label grouped by, "(none)" when empty (keys
// without a team, records without the metadata field).
const groupOf = (l) => (l.group === '' || l.group === undefined ? '(none)' : l.group);

// label is a bucket as the x axis shows it: 06-30 for a day, 06-30 14:00 for an hour.
function label(t, width) {
  const m = /^\d{4}-(\d\d-\d\d)T(\d\d:\d\d)/.exec(String(t));
  if (!m) return String(t);
  return width === 'hour' ? `${m[1]} ${m[2]}` : m[1];
}

async function load() {
  const mine = ++seq;
  const p = params();
  if (p.group === 'meta.') {
    note('Name the metadata field to group by (team, project…).');
    return;
  }
  note('Loading…');
  let rep;
  let names = new Map();
  try {
    [rep, names] = await Promise.all([
      get('/admin/usage?' + query({ from: p.from, to: p.to, group_by: p.group, bucket: p.bucket, key: p.key, team: p.team })),
      keyNames(),
    ]);
  } catch (err) {
    if (mine === seq) note(err.message);
    return;
  }
  if (mine !== seq) return;
  drawn = true;
  // The table names a key with its id; a chart, short of room, by its name alone.
  const name = (g) => (p.group === 'key' && names.has(g) ? `${names.get(g)} (${g})` : g);
  const short = (g) => (p.group === 'key' && names.has(g) ? names.get(g) : g);
  const data = rep.data || [];
  totals(rep.total);
  const charts = $('usage-charts');
  clear(charts);
  const timed = rep.bucket === 'hour' || rep.bucket === 'day';
  if (timed) {
    perTime(charts, data, rep.bucket, short);
  } else {
    perGroup(charts, data, p.group, short);
    await overTime(charts, p, mine);
  }
  await spendPerTeam(charts, p, mine);
  table(data, p.group, name, timed);
  if (mine === seq) note(`${p.from} to ${p.to} (UTC days)${rep.partial ? '; Redis did not answer: this replica only' : ''}.`);
}

async function keyNames() {
  try {
    const r = await get('/admin/keys');
    return new Map((r.data || []).map((k) => [k.id, k.name || k.id]));
  } catch {
    return new Map(); // ids only
  }
}

// totals shows the range's figures; data-figure names each for the tests.
function totals(t) {
  const el = $('usage-total');
  clear(el);
  const fig = (name, k, v) => h('div', { 'data-figure': name }, h('dt', {}, k), h('dd', {}, v));
  const ratio = input(t) > 0 && given(reads(t)) ? reads(t) / input(t) : null;
  el.append(h('dl', { className: 'pairs figures' },
    fig('requests', 'Requests', int(t.requests)), fig('input', 'Input tokens', int(input(t))),
    fig('output', 'Output tokens', int(output(t))), fig('cost', 'Cost', usd(t.cost_usd)),
    fig('cache-reads', 'Cache reads', int(reads(t))), fig('cache-ratio', 'Cache-hit ratio', pct(ratio)),
    fig('saved', 'Cache saved', usd(t.saved_usd)),
    fig('errors', 'Errors', int(t.errors)), fig('fallbacks', 'Fallbacks', int(t.fallbacks)),
    given(t.p95_first_token_ms) ? fig('p95', 'TTFT p95', ms(t.p95_first_token_ms)) : null));
}

// rank orders groups by requests, most first.
function rank(data) {
  const by = new Map();
  for (const l of data) {
    const g = groupOf(l);
    by.set(g, (by.get(g) || 0) + (l.requests || 0));
  }
  return [...by].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([g]) => g);
}

// perTime draws a line per group (the TOP busiest, the rest as "other") over the buckets
// of width (hour or day).
function perTime(el, data, width, name) {
  const buckets = [...new Set(data.map(timeOf))].sort();
  const groups = rank(data);
  const top = groups.slice(0, TOP);
  const rest = new Set(groups.slice(TOP));
  // The lines of each series (a top group, or null: the others) and bucket.
  const cell = new Map();
  for (const l of data) {
    const g = groupOf(l);
    const k = `${rest.has(g) ? '' : 'g:' + g}|${timeOf(l)}`;
    if (!cell.has(k)) cell.set(k, []);
    cell.get(k).push(l);
  }
  for (const m of metrics) {
    if (!has(m, data)) continue;
    const series = top.map((g) => ({ name: name(g), g }));
    if (rest.size && (m.sum || m.ratio)) series.push({ name: `other (${rest.size})`, g: null });
    for (const s of series) {
      s.values = buckets.map((b) => value(m, cell.get(`${s.g === null ? '' : 'g:' + s.g}|${b}`) || []));
    }
    el.append(lines(m.title, buckets.map((b) => label(b, width)), series, m.fmt, m.whole));
  }
}

// perGroup draws a bar per group (an answer without time buckets).
function perGroup(el, data, group, name) {
  const groups = rank(data);
  for (const m of metrics) {
    if (!has(m, data)) continue;
    const items = groups.slice(0, 20).map((g) => ({ name: name(g), value: value(m, data.filter((l) => groupOf(l) === g)) ?? 0 }));
    el.append(bars(`${m.title} per ${group}`, items, m.fmt));
  }
}

// overTime adds the totals over the buckets, from a call grouped by the bucket itself.
async function overTime(el, p, mine) {
  let rep;
  try {
    rep = await get('/admin/usage?' + query({ from: p.from, to: p.to, group_by: p.bucket, key: p.key, team: p.team }));
  } catch (err) {
    if (mine !== seq) return;
    const why = err instanceof APIError && err.status === 400 ? `this gateway reports usage by day only (${err.message})` : err.message;
    el.prepend(h('p', { className: 'note' }, `No chart over time: ${why}`));
    return;
  }
  if (mine !== seq) return;
  const data = (rep.data || []).slice().sort((a, b) => (timeOf(a) < timeOf(b) ? -1 : 1));
  if (!data.length) return;
  const labels = data.map((l) => label(timeOf(l), p.bucket));
  const charts = [];
  for (const m of metrics) {
    const values = data.map((l) => value(m, [l]));
    if (values.every((v) => v === null)) continue;
    charts.push(lines(`${m.title} by ${p.bucket}, all groups`, labels, [{ name: 'all', values }], m.fmt, m.whole));
  }
  el.prepend(...charts);
}

// spendPerTeam adds the cost of each team over the range (of the key or team the form names,
// within what the caller sees), from a call grouped by team, whatever the page groups by:
// what each team spends, the first question of a fleet's bill (issue 50).
async function spendPerTeam(el, p, mine) {
  let rep;
  try {
    rep = await get('/admin/usage?' + query({ from: p.from, to: p.to, group_by: 'team', key: p.key, team: p.team }));
  } catch (err) {
    if (mine === seq) el.append(h('p', { className: 'note' }, `No spend per team: ${err.message}`));
    return;
  }
  if (mine !== seq) return;
  const cost = metrics.find((m) => m.title === 'Cost');
  const data = rep.data || [];
  const items = rank(data).slice(0, 20).map((g) => ({ name: g, value: value(cost, data.filter((l) => groupOf(l) === g)) ?? 0 }))
    .sort((a, b) => b.value - a.value || (a.name < b.name ? -1 : 1));
  if (!items.length) return;
  const chart = bars('Spend per team', items, usd);
  chart.dataset.chart = 'spend-per-team';
  el.append(chart);
}

function table(data, group, name, timed) {
  const body = $('usage-table').tBodies[0];
  clear(body);
  $('usage-caption').textContent = `Per ${group}${timed ? ', summed over the range' : ''}`;
  for (const g of rank(data)) {
    const ls = data.filter((l) => groupOf(l) === g);
    const sum = (f) => ls.reduce((n, l) => n + (l[f] || 0), 0);
    // A p95 does not add up: shown for a group with one line only.
    const p95 = ls.length === 1 ? ls[0].p95_first_token_ms : undefined;
    const t = summed(ls);
    body.append(h('tr', {}, h('th', { scope: 'row' }, name(g)), h('td', {}, int(sum('requests'))),
      h('td', {}, int(input(t))), h('td', {}, int(output(t))), h('td', {}, int(reads(t))), h('td', {}, usd(sum('cost_usd'))),
      h('td', {}, usd(t.saved_usd)), h('td', {}, int(sum('errors'))), h('td', {}, int(t.fallbacks)), h('td', {}, ms(p95))));
  }
  if (!data.length) body.append(h('tr', {}, h('td', { colSpan: 10 }, 'Nothing was served in this range.')));
}
