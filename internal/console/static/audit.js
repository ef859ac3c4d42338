// The Audit page: GET /admin/audit with its filters, newest first, "load more" with the
// answer's next_cursor. A row opens the change's diff: the members of before and after,
// flattened to paths (budget.daily_usd), those that differ marked added, removed or
// changed. Secrets come already replaced by "[redacted]": the page never sees one.
import { h, clear } from '/playground/dom.js';
import { get, query, APIError } from './api.js';
import { time, fromLocalInput } from './fmt.js';

const $ = (id) => document.getElementById(id);
const PAGE = 50;

let cursor = null;
let seq = 0; // the latest list request: older answers are dropped

export function init() {
  $('audit-filters').addEventListener('submit', (e) => {
    e.preventDefault();
    load(true);
  });
  $('audit-reset').addEventListener('click', () => {
    $('audit-filters').reset();
    load(true);
  });
  $('audit-more').addEventListener('click', () => load(false));
}

export function show() {
  load(true); // changes are rare and the page is opened to see the latest: read it again
}

export function hide() {}

function note(text) {
  $('audit-note').textContent = text;
}

function filters() {
  const f = Object.fromEntries(new FormData($('audit-filters')));
  f.from = fromLocalInput(f.from);
  f.to = fromLocalInput(f.to);
  return f;
}

function mark(param) {
  for (const el of $('audit-filters').elements) {
    if (!el.name) continue;
    if (el.name === param) el.setAttribute('aria-invalid', 'true');
    else el.removeAttribute('aria-invalid');
  }
}

async function load(fresh) {
  const my = ++seq;
  const body = $('audit-table').tBodies[0];
  if (fresh) cursor = null;
  let page;
  try {
    page = await get('/admin/audit?' + query({ ...filters(), limit: PAGE, cursor }));
  } catch (err) {
    if (my !== seq) return;
    mark(err instanceof APIError ? err.param : '');
    note(err.message);
    return;
  }
  if (my !== seq) return;
  mark('');
  if (fresh) clear(body);
  for (const e of page.data) body.append(...rows(e));
  cursor = page.next_cursor;
  $('audit-more').hidden = !cursor;
  const kept = page.store === 'memory'
    ? 'Kept in this replica\'s memory (logs.url is empty): the last changes only, until a restart.'
    : 'Kept in the log store.';
  note(body.rows.length ? `${body.querySelectorAll('tr.entry').length} changes shown. ${kept}` : `No change matches. ${kept}`);
}

// rows are an entry's row and its diff's (hidden until the row is opened).
function rows(e) {
  const d = diff(e.before, e.after);
  const summary = d.length ? d.slice(0, 4).map((x) => x.path).join(', ') + (d.length > 4 ? ` and ${d.length - 4} more` : '') : '—';
  const open = h('button', { type: 'button', className: 'quiet', 'aria-expanded': 'false' }, 'Diff');
  const tr = h('tr', { className: 'entry', 'data-id': e.id },
    h('td', {}, time(e.time)),
    h('td', {}, e.user || '—', h('span', { className: 'muted' }, e.role ? ` (${e.role})` : '')),
    h('td', {}, h('code', {}, e.action)),
    h('td', {}, e.resource_kind, e.resource_id ? ' ' : '', e.resource_id ? h('code', {}, e.resource_id) : ''),
    h('td', { className: 'changes' }, summary),
    h('td', {}, open));
  const panel = h('tr', { className: 'diff-row', hidden: true }, h('td', { colSpan: 6 }, diffTable(d)));
  const toggle = () => {
    panel.hidden = !panel.hidden;
    open.setAttribute('aria-expanded', String(!panel.hidden));
  };
  open.addEventListener('click', (ev) => {
    ev.stopPropagation();
    toggle();
  });
  tr.addEventListener('click', toggle);
  return [tr, panel];
}

function diffTable(d) {
  if (!d.length) return h('p', { className: 'muted' }, 'No member changed.');
  return h('table', { className: 'diff' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Member'), h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After'))),
    h('tbody', {}, d.map((x) => h('tr', { 'data-change': x.change },
      h('th', { scope: 'row' }, h('code', {}, x.path)),
      h('td', { className: 'before' }, x.before === undefined ? '' : x.before),
      h('td', { className: 'after' }, x.after === undefined ? '' : x.after)))));
}

// flat maps a JSON value's leaves to their paths (a.b, list[0]), each as JSON text; an empty
// object or list is a leaf.
function flat(v, path = '', out = new Map()) {
  if (v !== null && typeof v === 'object' && Object.keys(v).length) {
    for (const [k, x] of Object.entries(v)) flat(x, Array.isArray(v) ? `${path}[${k}]` : path ? `${path}.${k}` : k, out);
  } else if (path || v !== null) {
    out.set(path || '(value)', JSON.stringify(v));
  }
  return out;
}

// diff lists the paths whose values differ between before and after, in after's order then
// the removed ones.
export function diff(before, after) {
  const b = flat(before);
  const a = flat(after);
  const out = [];
  for (const [p, v] of a) {
    if (!b.has(p)) out.push({ path: p, change: 'added', after: v });
    else if (b.get(p) !== v) out.push({ path: p, change: 'changed', before: b.get(p), after: v });
  }
  for (const [p, v] of b) if (!a.has(p)) out.push({ path: p, change: 'removed', before: v });
  return out;
}
