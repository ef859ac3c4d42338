// Rendering of messages: an answer has two views, its transcript entry (text, collapsed
// reasoning, restarts, its figures) and its activity entry (each round a step, each tool call
// with its arguments, progress and result). Views are updated in place from the answer's
// state, so a stream can re-render at every frame without losing a reader's selection or an
// opened <details>. Text goes in as text nodes only (dom.js).
import { h, setText, clear } from './dom.js';
import { progressOf, textOf, toolPart, toolName, shortTarget } from './stream.js';

// userView is a user message's transcript entry.
export function userView(m) {
  const text = m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
  return h('article', { className: 'msg user', 'aria-label': 'You' }, h('div', { className: 'text' }, text));
}

// AnswerView renders one assistant answer.
export class AnswerView {
  constructor(a) {
    this.body = h('div', { className: 'body' });
    this.error = h('p', { className: 'error', role: 'alert', hidden: true });
    this.figures = h('dl', { className: 'figures' });
    this.el = h('article', { className: 'msg assistant', 'aria-label': 'Answer', 'aria-busy': 'true' },
      this.body, this.error, this.figures);
    this.steps = h('ol', { className: 'steps' });
    this.warnings = h('ul', { className: 'warnings' });
    this.title = h('h3', {}, a.model);
    this.activity = h('section', { className: 'run' }, this.title, this.steps, this.warnings);
    this.parts = new Map(); // part key -> element in body
    this.stepEls = new Map(); // step n -> {li, head, tools, restarts}
    this.toolEls = new Map(); // tool call id -> elements
    this.update(a);
  }

  update(a) {
    this.el.setAttribute('aria-busy', String(a.status === 'streaming'));
    setText(this.title, `${a.model}${a.runId ? ' · ' + a.runId : ''}`);
    this.renderBody(a);
    this.error.hidden = !a.error;
    setText(this.error, a.error);
    this.renderFigures(a);
    for (const s of a.steps) this.renderStep(a, s);
    clear(this.warnings);
    for (const w of a.warnings) this.warnings.append(h('li', { className: 'warning' }, w));
  }

  // renderBody keeps one element per text or reasoning part, in order, and a notice where a
  // restart dropped text; elements of parts a restart removed go away.
  renderBody(a) {
    const want = [];
    let step = 0;
    for (const p of a.parts) {
      if (p.type === 'step-start') {
        step++;
        const s = a.steps[step - 1];
        for (let i = 0; s && i < s.restarts.length; i++) want.push(['restart', `${step}.${i}`, s.restarts[i]]);
      } else if (p.type === 'text' || p.type === 'reasoning') {
        want.push([p.type, p.id, p]);
      }
    }
    const keep = new Set();
    let prev = null;
    for (const [kind, id, v] of want) {
      const key = kind + ':' + id;
      keep.add(key);
      let el = this.parts.get(key);
      if (!el) {
        el = kind === 'reasoning' ? reasoningEl() : kind === 'restart' ? restartEl(v) : h('div', { className: 'text' });
        this.parts.set(key, el);
      }
      if (kind === 'text') setMasked(el, v.text);
      if (kind === 'reasoning') {
        setText(el.lastChild, v.text);
        setText(el.firstChild, v.state === 'done' ? 'Reasoning' : 'Reasoning…');
      }
      if (prev ? prev.nextSibling !== el : this.body.firstChild !== el) {
        if (prev) prev.after(el);
        else this.body.prepend(el);
      }
      prev = el;
    }
    for (const [key, el] of this.parts) {
      if (!keep.has(key)) {
        el.remove();
        this.parts.delete(key);
      }
    }
    if (!textOf(a) && a.status === 'streaming' && !this.body.firstChild) this.body.append(h('span', { className: 'spinner', 'aria-label': 'waiting' }));
    else for (const s of this.body.querySelectorAll(':scope > .spinner')) s.remove();
  }

  renderFigures(a) {
    const m = a.metadata || {};
    const u = m.usage;
    const rows = [];
    if (u) rows.push(['tokens', `${u.inputTokens ?? 0} in · ${u.outputTokens ?? 0} out${u.estimated ? ' (estimated)' : ''}`]);
    if (u || a.status !== 'streaming') rows.push(['cost', typeof m.costUsd === 'number' ? '$' + m.costUsd.toFixed(6) : 'no price']);
    if (m.target) rows.push(['target', shortTarget(m.target)]);
    if (m.attempts) {
      // attempts counts the targets tried (later rounds on the served one are calls, not
      // attempts): past the first, each is a fallback (or a restart).
      const extra = m.attempts - 1;
      rows.push(['attempts', extra > 0 ? `${m.attempts} (${extra} fallback${extra > 1 ? 's' : ''})` : String(m.attempts)]);
    }
    if (a.ttftMs != null) rows.push(['first token', a.ttftMs ? `${a.ttftMs} ms` : '< 1 ms']);
    rows.push(['status', a.status === 'finished' ? `finished (${a.finishReason})` : a.status]);
    clear(this.figures);
    for (const [k, v] of rows) this.figures.append(h('div', { 'data-k': k }, h('dt', {}, k), h('dd', {}, v)));
  }

  renderStep(a, s) {
    let e = this.stepEls.get(s.n);
    if (!e) {
      e = { head: h('div', { className: 'step-head' }), tools: h('div'), restarts: h('div') };
      e.li = h('li', { className: 'step' }, e.head, e.restarts, e.tools);
      this.stepEls.set(s.n, e);
      this.steps.append(e.li);
    }
    const m = s.meta;
    const bits = [`Step ${s.n}`];
    if (m && m.target) bits.push(shortTarget(m.target));
    const prev = a.steps.find((x) => x.n === s.n - 1)?.meta;
    const tries = m && m.attempts ? m.attempts - (prev?.attempts || 0) : 0; // the run's count is cumulative: this step's targets
    if (tries > 1) bits.push(`${tries} attempts`);
    if (m && m.roundUsage) bits.push(`${m.roundUsage.inputTokens}+${m.roundUsage.outputTokens} tokens`);
    setText(e.head, bits.join(' · '));
    if (e.restarts.childElementCount !== s.restarts.length) {
      clear(e.restarts);
      for (const r of s.restarts) {
        e.restarts.append(h('div', { className: 'restart' },
          h('span', {}, `Restarted on the next target: ${r.text.length} characters discarded`),
          r.text ? h('del', {}, r.text) : null));
      }
    }
    for (const id of s.tools) this.renderTool(a, e, id, s.n);
    for (const [id, t] of this.toolEls) {
      if (t.step === s.n && !s.tools.includes(id)) {
        t.el.remove();
        this.toolEls.delete(id);
      }
    }
  }

  renderTool(a, e, id, n) {
    const part = toolPart(a, id);
    if (!part) return;
    let t = this.toolEls.get(id);
    if (!t) {
      t = {
        step: n,
        name: h('strong'), state: h('span', { className: 'badge' }),
        args: h('pre', { className: 'args' }), progress: h('div', { className: 'progress' }),
        result: h('pre', { className: 'result', hidden: true }), err: h('p', { className: 'error', hidden: true }),
      };
      t.el = h('div', { className: 'tool', 'data-tool-call': id },
        h('div', { className: 'tool-head' }, t.name, ' ', t.state), t.args, t.progress, t.result, t.err);
      this.toolEls.set(id, t);
      e.tools.append(t.el);
    }
    setText(t.name, toolName(part));
    const done = part.state === 'output-available' || part.state === 'output-error';
    // A call the gateway does not run ends the run for the client to run (this page runs none).
    const waiting = part.state === 'input-available' && !part.providerExecuted && a.status !== 'streaming';
    const live = a.status === 'streaming';
    setText(t.state, done ? (part.state === 'output-error' ? 'failed' : 'done') : waiting ? 'for the client' : live ? 'running' : 'not finished');
    t.state.dataset.state = done ? part.state : live ? 'running' : 'over';
    setText(t.args, part.input === undefined ? '…' : json(part.input));
    this.renderProgress(t.progress, progressOf(a, id), done || !live);
    t.result.hidden = part.state !== 'output-available';
    if (!t.result.hidden) setText(t.result, json(part.output));
    t.err.hidden = part.state !== 'output-error';
    setText(t.err, part.errorText || '');
  }

  // renderProgress shows a determinate bar when the tool says how far it is (done of
  // total), a spinner only when it does not, and only while the call runs (over: it ended,
  // or the run did).
  renderProgress(box, p, over) {
    if (!p) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const determinate = typeof p.total === 'number' && p.total > 0 && typeof p.done === 'number';
    let bar = box.querySelector('progress');
    let spin = box.querySelector('.spinner');
    let label = box.querySelector('.label');
    if (!label) {
      label = h('span', { className: 'label' });
      box.append(label);
    }
    if (determinate) {
      spin?.remove();
      if (!bar) {
        bar = h('progress', {});
        box.prepend(bar);
      }
      bar.max = p.total;
      bar.value = Math.min(p.done, p.total);
      bar.setAttribute('aria-label', `${p.done} of ${p.total}`);
      box.dataset.complete = String(p.done >= p.total);
    } else {
      bar?.remove();
      if (!spin && !over) box.prepend(h('span', { className: 'spinner', 'aria-label': 'working' }));
      if (over) spin?.remove();
      box.dataset.complete = String(over);
    }
    const parts = [];
    if (determinate) parts.push(`${p.done}/${p.total}`);
    if (p.message) parts.push(String(p.message));
    setText(label, parts.join(' · '));
  }
}

// setMasked sets el's text with the gateway's redaction masks ("[REDACTED:openai_key]")
// marked, so that a reader sees where a secret was taken out.
const masked = new WeakMap(); // element -> the text it shows

function setMasked(el, text) {
  if (masked.get(el) === text) return;
  masked.set(el, text);
  const mask = /\[REDACTED:[a-z0-9_]+\]/g;
  const nodes = [];
  let at = 0;
  for (const m of text.matchAll(mask)) {
    nodes.push(text.slice(at, m.index), h('mark', { className: 'redacted', title: 'masked by the gateway' }, m[0]));
    at = m.index + m[0].length;
  }
  nodes.push(text.slice(at));
  el.replaceChildren(...nodes.filter((n) => n !== ''));
}

function reasoningEl() {
  return h('details', { className: 'reasoning' }, h('summary', {}, 'Reasoning'), h('pre', {}));
}

function restartEl(r) {
  return h('p', { className: 'restart-note' },
    `↻ The answer restarted on the next target; ${r.text.length} characters were dropped: `,
    h('del', {}, r.text));
}

function json(v) {
  try {
    return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}
