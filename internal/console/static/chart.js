// Charts drawn as SVG from the gateway's figures: no charting library, nothing fetched. Labels
// go in as text nodes (a group name is a key's or a metadata value: data from outside), and
// each point has a <title> a pointer or a screen reader can read.
import { h } from '/playground/dom.js';

const NS = 'http://www.w3.org/2000/svg'; // the SVG namespace: a name, not a URL to fetch
const W = 640;
const H = 220;
const M = { l: 64, r: 14, t: 12, b: 30 };
const COLORS = 8; // series colors s0..s7 in console.css; more series reuse them

// svg creates an SVG element; attrs are attributes, children nodes or text.
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return el;
}

// scale picks the axis: a round step (1, 2 or 5 times a power of ten; whole for counts) that
// covers max in three to five intervals, so that ticks read as round figures.
function scale(max, whole) {
  const want = max > 0 ? max / 5 : 1;
  const p = 10 ** Math.floor(Math.log10(want));
  let step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= want * 0.9999999) || 10 * p;
  if (whole) step = Math.max(1, Math.round(step));
  return { max: Math.max(step, Math.ceil(max / step - 1e-9) * step), step };
}

function frame(title, body, legend) {
  return h('figure', { className: 'chart' }, h('figcaption', {}, title), body, legend);
}

function yAxis({ max, step }, fmt) {
  const out = [];
  const n = Math.round(max / step);
  for (let i = 0; i <= n; i++) {
    const v = step * i;
    const y = M.t + (H - M.t - M.b) * (1 - i / n);
    out.push(svg('line', { x1: M.l, x2: W - M.r, y1: y, y2: y, class: 'grid' }),
      svg('text', { x: M.l - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, fmt(v)));
  }
  return out;
}

// lines draws series over the buckets (labels: the x axis, in order); each series is
// {name, values} with a value per bucket (null: none). fmt formats a value; whole says the
// values are counts.
export function lines(title, labels, series, fmt, whole = false) {
  const axis = scale(Math.max(0, ...series.flatMap((s) => s.values.filter((v) => v !== null && v !== undefined))), whole);
  const { max } = axis;
  const n = labels.length;
  const x = (i) => (n === 1 ? (M.l + W - M.r) / 2 : M.l + ((W - M.l - M.r) * i) / (n - 1));
  const y = (v) => M.t + (H - M.t - M.b) * (1 - v / max);
  const every = Math.max(1, Math.ceil(n / 8));
  // The first and last labels are anchored inwards, so that none runs off the plot.
  const anchor = (i) => (n === 1 ? 'middle' : i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle');
  const xs = labels.map((l, i) => (i % every === 0
    ? svg('text', { x: x(i), y: H - 8, 'text-anchor': anchor(i), class: 'tick' }, l) : null));
  const drawn = series.map((s, k) => {
    const cls = 's' + (k % COLORS);
    const pts = s.values.map((v, i) => (v === null || v === undefined ? null : [x(i), y(v), v, i]));
    // A gap (no value) breaks the line: a bucket without data is not a zero.
    let d = '';
    let pen = false;
    for (const p of pts) {
      if (!p) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${p[0].toFixed(1)},${p[1].toFixed(1)}`;
      pen = true;
    }
    return svg('g', { class: 'series ' + cls },
      d ? svg('path', { d, class: 'line' }) : null,
      pts.filter(Boolean).map((p) => svg('circle', { cx: p[0].toFixed(1), cy: p[1].toFixed(1), r: n > 60 ? 1.5 : 2.5 },
        svg('title', {}, `${s.name} · ${labels[p[3]]}: ${fmt(p[2])}`))));
  });
  const body = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', role: 'img', 'aria-label': title }, yAxis(axis, fmt), xs, drawn);
  return frame(title, body, legend(series.map((s) => s.name)));
}

// bars draws one horizontal bar per {name, value}, largest first as given.
export function bars(title, items, fmt) {
  const max = Math.max(0, ...items.map((i) => i.value || 0)) || 1;
  const row = 22;
  const height = M.t + row * items.length + 8;
  const left = 200;
  const body = svg('svg', { viewBox: `0 0 ${W} ${height}`, class: 'plot', role: 'img', 'aria-label': title },
    items.map((it, k) => {
      const y = M.t + row * k;
      const w = ((W - left - 90) * (it.value || 0)) / max;
      return svg('g', { class: 'series s' + (k % COLORS) },
        svg('text', { x: left - 8, y: y + 15, 'text-anchor': 'end', class: 'tick' }, clip(it.name, 30)),
        svg('rect', { x: left, y: y + 3, width: Math.max(w, 1).toFixed(1), height: row - 7, rx: 2, class: 'bar' },
          svg('title', {}, `${it.name}: ${fmt(it.value)}`)),
        svg('text', { x: left + w + 6, y: y + 15, class: 'tick' }, fmt(it.value)));
    }));
  return frame(title, body, null);
}

function clip(s, n) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

function legend(names) {
  if (names.length < 2) return null;
  return h('ul', { className: 'legend' }, names.map((n, k) => h('li', { className: 's' + (k % COLORS) }, n)));
}
