// Formats for the console's figures: fixed English formats, so that a screenshot or a test
// reads the same on every machine. Every function takes a missing value (null, undefined)
// and gives '—'.

const none = (v) => v === undefined || v === null || (typeof v === 'number' && Number.isNaN(v));
const nf = new Intl.NumberFormat('en-US');

export function int(v) {
  return none(v) ? '—' : nf.format(Math.round(v));
}

export function ms(v) {
  if (none(v)) return '—';
  if (v < 10) return `${Number(v.toFixed(1))} ms`;
  if (v < 10_000) return `${Math.round(v)} ms`;
  return `${(v / 1000).toFixed(1)} s`;
}

// usd keeps two significant digits below a dollar: a request costs fractions of a cent. A
// negative amount (a prompt cache's saving on a turn that only wrote it) reads -$0.0012.
export function usd(v) {
  if (none(v)) return '—';
  if (v === 0) return '$0';
  const sign = v < 0 ? '-' : '';
  const a = Math.abs(v);
  if (a >= 1) return sign + '$' + a.toFixed(2);
  const places = Math.min(10, Math.max(2, 1 - Math.floor(Math.log10(a))));
  return sign + '$' + a.toFixed(places);
}

// weight is a routing weight (0.05 to 1, issue 49), to two places.
export function weight(v) {
  return none(v) ? '—' : v.toFixed(2);
}

export function pct(v) {
  return none(v) ? '—' : `${(v * 100).toFixed(v < 0.1 ? 1 : 0)}%`;
}

const pad = (n) => String(n).padStart(2, '0');

// time is a timestamp in the browser's zone, to the second.
export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// localInput is a Date as a datetime-local input's value; fromLocalInput the reverse, as
// RFC 3339 UTC (what the admin API takes), '' for ''.
export function localInput(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(v) {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? v : d.toISOString().replace('.000Z', 'Z');
}

// day is a Date's UTC day, 2026-06-30 (the usage account's days are UTC).
export function day(d) {
  return d.toISOString().slice(0, 10);
}

// shortTarget leaves out a scripted target's query (sim/text?len=0&say=...): the demos'
// insides, long and of no use in a table.
export function shortTarget(t) {
  const s = t || '';
  const i = s.indexOf('?');
  return i < 0 ? s : s.slice(0, i) + '?…';
}

export function yesNo(v) {
  return none(v) ? '—' : v ? 'yes' : 'no';
}
