// A request's detail (#logs/<id>): GET /admin/logs/{id}, shown as the request's summary, its
// attempts as a timeline, timings, tokens and cost, redactions, guardrail verdicts, tool
// calls and, when captured, its content. Everything a record holds is data from outside
// (prompts, answers, error texts, user agents): it goes in as text nodes only (dom.js), so
// a captured "<img src=x onerror=...>" is shown, never parsed.
import { h, clear } from '/playground/dom.js';
import { get, APIError } from './api.js';
import { time, ms, int, usd, shortTarget, yesNo } from './fmt.js';
import { svg } from './chart.js';

let seq = 0;

export async function showDetail(el, id) {
  const mine = ++seq;
  clear(el);
  el.append(back(), h('p', { className: 'note' }, 'Loading…'));
  let rec;
  try {
    rec = await get('/admin/logs/' + encodeURIComponent(id));
  } catch (err) {
    if (mine !== seq) return;
    clear(el);
    const why = err instanceof APIError && err.status === 404 ? `No request ${id} in the log.` : err.message;
    el.append(back(), h('p', { className: 'error', role: 'alert' }, why));
    return;
  }
  if (mine !== seq) return;
  clear(el);
  el.append(back(), ...render(rec));
  el.querySelector('h2').focus();
}

function back() {
  return h('p', {}, h('a', { href: '#logs', className: 'back' }, '← All requests'));
}

// pairs is a <dl> of [term, value] pairs; values are strings or nodes.
function pairs(className, list) {
  return h('dl', { className: 'pairs ' + className },
    list.filter(([, v]) => v !== undefined).map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))));
}

function section(title, ...body) {
  return h('section', { className: 'part' }, h('h3', {}, title), ...body);
}

function table(head, rows, empty) {
  if (!rows.length) return h('p', { className: 'note' }, empty);
  return h('div', { className: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c)))))));
}

export function render(rec) {
  const failed = rec.status >= 400 || (rec.kind && rec.kind !== 'none');
  const meta = Object.entries(rec.key_meta || {}).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(', ');
  return [
    h('h2', { tabIndex: -1 }, 'Request ', h('code', {}, rec.id)),
    h('p', { className: 'headline', 'data-state': failed ? 'error' : 'ok' },
      `${rec.status ?? '—'}${rec.kind && rec.kind !== 'none' ? ' ' + rec.kind : ''} · ${time(rec.time)} · ${rec.method || ''} ${rec.path || ''}`),
    rec.error ? h('p', { className: 'error' }, rec.error) : '',
    pairs('summary', [
      ['Request id', rec.request_id || rec.id], // the X-Request-Id the client got (issue 47)
      ['Key', rec.key_name ? `${rec.key_name} (${rec.key_id})` : rec.key_id || '—'],
      ['Team', rec.team || '—'],
      ['Key metadata', meta || '—'],
      ['Wire', rec.wire || '—'],
      ['Alias', rec.alias || '—'],
      ['Served by', rec.target || '—'],
      ['Stream', yesNo(rec.stream)],
      ['Response cache', rec.cache || '—'],
      ['Affinity', rec.affinity || '—'], // what conversation affinity did: new, kept, moved
      ['Replica', rec.replica || '—'],
      ['User agent', rec.user_agent || '—'],
      ['Trace id', rec.trace_id || '—'],
      ['Capture', rec.capture || '—'],
    ]),
    section('Attempts', timeline(rec)),
    section('Timing', pairs('figures', [
      ['First event', ms(rec.first_event_ms)],
      ['First token (TTFT)', ms(rec.first_token_ms)],
      ['Duration', ms(rec.duration_ms)],
      ['Gateway overhead', ms(rec.overhead_ms)],
    ])),
    section('Tokens and cost', pairs('figures', [
      ['Input', int(rec.tokens_in)],
      ['Output', int(rec.tokens_out)],
      ['Reasoning', int(rec.tokens_reasoning)],
      ['Estimated', yesNo(rec.tokens_estimated)],
      ['Cost', usd(rec.cost_usd)],
    ])),
    section('Prompt cache', h('p', { className: 'note' },
      "The provider's cache of the prompt: tokens read from it cost less than input, tokens written to it more."),
    pairs('figures prompt-cache', [
      ['Read', int(rec.cache_read_tokens ?? rec.tokens_cached)],
      ['Written', int(rec.cache_write_tokens)],
      ['Written for 1 hour', int(rec.cache_write_1h_tokens)],
      ['Saved', usd(rec.saved_usd)],
      ['Breakpoints dropped', int(rec.cache_dropped)],
    ])),
    section('Redactions and guardrails',
      h('p', {}, `${int(rec.redactions ?? 0)} redaction${rec.redactions === 1 ? '' : 's'} applied.`),
      table(['Guardrail', 'Stage', 'Verdict'], (rec.guardrails || []).map((g) => [g.name, g.stage, g.verdict]), 'No guardrail ran.')),
    section('Tool calls',
      table(['Tool', 'Server', 'Time', 'Outcome'], (rec.tools || []).map((t) => [t.name, t.server || '—', ms(t.ms), t.outcome]), 'No tool call.')),
    section('Content', ...content(rec)),
  ];
}

// timeline draws the attempts one after the other (a fallback starts when the attempt
// before it ended) on the request's time scale, with the table of their figures.
function timeline(rec) {
  const attempts = rec.attempts || [];
  if (!attempts.length) return h('p', { className: 'note' }, 'No attempt: the request was answered or refused before any target.');
  const sum = attempts.reduce((n, a) => n + (a.ms || 0), 0);
  const total = Math.max(rec.duration_ms || 0, sum, 1);
  let at = 0;
  const rows = attempts.map((a, i) => {
    const x = (at / total) * 100;
    const w = Math.max(((a.ms || 0) / total) * 100, 0.5);
    at += a.ms || 0;
    const ok = a.kind === 'none' || (!a.kind && a.status < 400);
    const bar = svg('svg', { viewBox: '0 0 100 10', preserveAspectRatio: 'none', class: 'bar', role: 'img',
      'aria-label': `from ${Math.round((x * total) / 100)} ms for ${a.ms ?? 0} ms` },
    svg('rect', { x: 0, y: 4.5, width: 100, height: 1, class: 'track' }),
    svg('rect', { x: x.toFixed(2), y: 1, width: w.toFixed(2), height: 8, rx: 1, class: ok ? 'ok' : 'fail' }));
    return h('tr', { 'data-state': ok ? 'ok' : 'error' },
      h('td', {}, String(i + 1)), h('td', {}, shortTarget(a.target)), h('td', {}, `${a.status || ''} ${a.kind || (ok ? 'served' : '')}`.trim() || '—'),
      h('td', {}, ms(a.ms)), h('td', { className: 'lane' }, bar));
  });
  return h('div', { className: 'table-wrap' }, h('table', { className: 'timeline' },
    h('thead', {}, h('tr', {}, ['#', 'Target', 'Outcome', 'Time', 'Timeline'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)));
}

// contentText is captured content as text: JSON (a request's messages) indented, anything
// else as it came.
function contentText(v) {
  if (typeof v !== 'string') return JSON.stringify(v, null, 2);
  try {
    const parsed = JSON.parse(v);
    if (parsed && typeof parsed === 'object') return JSON.stringify(parsed, null, 2);
  } catch {
    // not JSON: the text itself
  }
  return v;
}

function content(rec) {
  const c = rec.content;
  if (!c) return [h('p', { className: 'note' }, 'Not captured: content is kept only where capture is "content" for the alias or the key.')];
  const cap = c.cap ? ` Each part is kept up to ${int(c.cap)} bytes${c.truncated ? '; this one was cut there.' : '.'}` : '';
  return [
    h('p', { className: 'note' }, 'As the client sent and saw it, after redaction. Shown as text.' + cap),
    h('h4', {}, 'Request'),
    h('pre', { className: 'captured', 'data-part': 'request' }, contentText(c.request ?? '')),
    h('h4', {}, 'Answer'),
    h('pre', { className: 'captured', 'data-part': 'answer' }, contentText(c.answer ?? '')),
  ];
}
