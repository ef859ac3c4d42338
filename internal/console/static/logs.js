// The Logs page: GET /admin/logs with the filters, newest first, "load more" with the answer's
// next_cursor, a live tail (GET /admin/logs/tail as Server-Sent Events, same filters), export
// links, and a request's detail at #logs/<id> (detail.js).
import { h, clear } from '/playground/dom.js';
import { get, query, APIError } from './api.js';
import { time, ms, int, usd, shortTarget, fromLocalInput } from './fmt.js';
import { showDetail } from './detail.js';

const $ = (id) => document.getElementById(id);
const PAGE = 100; // records per request
const KEEP = 2000; // rows the table holds; the tail drops the oldest beyond (they stay in the log)

let shown = false;
let cursor = null;
let loaded = false; // the list was read for the current filters
let seq = 0; // the latest list request: older answers are dropped
let tail = null; // the EventSource while the live tail is on
const ids = new Set(); // records in the table

export function init() {
  $('log-filters').addEventListener('submit', (e) => {
    e.preventDefault();
    load(true);
  });
  $('log-reset').addEventListener('click', () => {
    $('log-filters').reset();
    load(true);
  });
  $('log-more').addEventListener('click', () => load(false));
  $('log-tail').addEventListener('change', () => setTail($('log-tail').checked));
  $('log-filters').addEventListener('input', exportLinks);
}

export function show(arg) {
  shown = true;
  $('log-list').hidden = !!arg;
  $('log-detail').hidden = !arg;
  if (arg) {
    showDetail($('log-detail'), arg);
    return;
  }
  if (!loaded) load(true);
  if ($('log-tail').checked && !tail) setTail(true);
}

export function hide() {
  shown = false;
  setTail(false, true);
}

function note(text) {
  $('log-note').textContent = text;
}

// filters are the form's filters as the admin API takes them: times in RFC 3339 UTC.
function filters() {
  const f = Object.fromEntries(new FormData($('log-filters')));
  f.from = fromLocalInput(f.from);
  f.to = fromLocalInput(f.to);
  return f;
}

function exportLinks() {
  const q = query(filters());
  $('export-jsonl').href = '/admin/logs/export?' + query({ format: 'jsonl' }) + (q ? '&' + q : '');
  $('export-csv').href = '/admin/logs/export?' + query({ format: 'csv' }) + (q ? '&' + q : '');
}

// mark flags the filter the gateway refused (its param), and clears the others.
function mark(param) {
  for (const el of $('log-filters').elements) {
    if (!el.name) continue;
    if (el.name === param) {
      el.setAttribute('aria-invalid', 'true');
      el.focus();
    } else {
      el.removeAttribute('aria-invalid');
    }
  }
}

async function load(reset) {
  const mine = ++seq;
  const f = filters();
  exportLinks();
  if (reset) cursor = null;
  note(reset ? 'Loading…' : 'Loading more…');
  let page;
  try {
    page = await get('/admin/logs?' + query({ ...f, limit: PAGE, cursor }));
  } catch (err) {
    if (mine !== seq) return;
    if (err instanceof APIError && err.status === 404) {
      note('This gateway keeps no request log: logs.url is empty, or its admin API has no /admin/logs.');
    } else {
      note(err.message);
      if (err.param) mark(err.param);
    }
    $('log-more').hidden = true;
    return;
  }
  if (mine !== seq) return;
  mark('');
  const body = $('log-table').tBodies[0];
  if (reset) {
    clear(body);
    ids.clear();
    loaded = true;
    if (tail) setTail(true); // the tail follows the new filters
  }
  for (const rec of page.data || []) add(rec, false);
  cursor = page.next_cursor || null;
  $('log-more').hidden = !cursor;
  empty();
  const n = body.rows.length - (body.querySelector('.empty') ? 1 : 0);
  note(`${int(n)} request${n === 1 ? '' : 's'} shown${cursor ? '; more below' : ''}${tail ? '; live' : ''}.`);
}

function empty() {
  const body = $('log-table').tBodies[0];
  const placeholder = body.querySelector('.empty');
  if (ids.size && placeholder) placeholder.remove();
  if (!ids.size && !placeholder) body.append(h('tr', { className: 'empty' }, h('td', { colSpan: 16 }, 'No request matches.')));
}

// add puts a record's row at the end of the table (a page) or at the top (the tail).
function add(rec, top) {
  if (!rec || !rec.id || ids.has(rec.id)) return;
  ids.add(rec.id);
  const body = $('log-table').tBodies[0];
  const tr = row(rec);
  if (top) body.prepend(tr);
  else body.append(tr);
  while (ids.size > KEEP) {
    const last = body.rows[body.rows.length - 1];
    ids.delete(last.dataset.id);
    last.remove();
  }
}

export function statusText(rec) {
  const kind = rec.kind && rec.kind !== 'none' ? ' ' + rec.kind : '';
  return `${rec.status ?? '—'}${kind}`;
}

function row(rec) {
  const attempts = (rec.attempts || []).length;
  const failed = rec.status >= 400 || (rec.kind && rec.kind !== 'none');
  const tr = h('tr', { 'data-id': rec.id, 'data-state': failed ? 'error' : 'ok' },
    h('td', {}, h('a', { href: '#logs/' + encodeURIComponent(rec.id) }, time(rec.time))),
    h('td', { className: 'status' }, statusText(rec)),
    h('td', {}, rec.key_name || rec.key_id || '—'),
    h('td', {}, rec.team || '—'), // the key's team when the request was made
    h('td', {}, rec.alias || '—'),
    h('td', { className: 'target' }, shortTarget(rec.target) || '—'),
    h('td', { className: 'wire' }, rec.wire || '—'), // the client's API: chat, messages, responses...
    h('td', { className: 'attempts' }, attempts > 1 ? `${attempts} (fallback)` : String(attempts || '—')),
    h('td', {}, ms(rec.first_token_ms)),
    h('td', {}, ms(rec.duration_ms)),
    h('td', { className: 'tokens' }, `${int(rec.tokens_in)} → ${int(rec.tokens_out)}`),
    h('td', {}, usd(rec.cost_usd)),
    h('td', {}, rec.cache || '—'), // the gateway's response cache
    h('td', { className: 'prompt-cache' }, promptCache(rec)), // the provider's (issue 46)
    h('td', { className: 'affinity' }, rec.affinity || '—'),
    h('td', { className: 'id' }, rec.id, requestID(rec)));
  // The whole row opens the detail; the time is the link a keyboard reaches.
  tr.addEventListener('click', (e) => {
    if (e.target.closest('a')) return;
    location.hash = '#logs/' + encodeURIComponent(rec.id);
  });
  return tr;
}

// requestID is the X-Request-Id the client chose, under the record's id; nothing when the
// client got the record's id (issue 47).
export function requestID(rec) {
  return rec.request_id && rec.request_id !== rec.id ? h('span', { className: 'request-id' }, rec.request_id) : '';
}

// promptCache is a record's provider prompt cache: tokens read / written, '—' for none (a
// record from before issue 46 has its reads in tokens_cached only).
export function promptCache(rec) {
  const read = rec.cache_read_tokens ?? rec.tokens_cached ?? 0;
  const written = rec.cache_write_tokens ?? 0;
  return read || written ? `${int(read)} / ${int(written)}` : '—';
}

// setTail opens or closes the live tail. EventSource sends the session cookie (same origin)
// and reconnects by itself after a break; a tail the gateway does not serve ends it.
function setTail(on, quiet = false) {
  if (tail) {
    tail.close();
    tail = null;
  }
  if (!on || !shown) {
    if (!quiet && loaded) note('Live tail off.');
    return;
  }
  const f = filters();
  delete f.from; // the tail is what comes from now on
  delete f.to;
  const q = query(f);
  const es = new EventSource('/admin/logs/tail' + (q ? '?' + q : ''));
  tail = es;
  es.onopen = () => tail === es && note('Live: new requests appear at the top.');
  es.onmessage = (e) => {
    let rec;
    try {
      rec = JSON.parse(e.data);
    } catch {
      return; // not a record (a comment or a keep-alive)
    }
    add(rec, true);
    empty();
  };
  es.onerror = () => {
    if (tail !== es) return;
    if (es.readyState === EventSource.CLOSED) {
      note('The live tail ended: the gateway refused it or has no /admin/logs/tail.');
      $('log-tail').checked = false;
      tail = null;
    } else {
      note('The live tail lost the gateway; reconnecting…');
    }
  };
}
