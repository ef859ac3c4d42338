// The AI SDK UI message stream (protocol v1, the chunks of ai@7's uiMessageChunkSchema, as the
// gateway sends them: DESIGN §8) folded into an answer: the UIMessage the AI SDK would build
// (parts, metadata), which the page sends back as history, plus what the page shows beside
// it: the steps, the text a restart discarded, the run's end. No DOM here: the module also
// runs under node for its unit test.

// readFrames yields the frames ({id, data}) of an SSE body (a ReadableStream of bytes), as
// the gateway writes them: LF line ends, a blank line after each frame. Comments
// (": keepalive") are skipped.
export async function* readFrames(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const f = parseFrame(buf.slice(0, i));
        buf = buf.slice(i + 2);
        if (f) yield f;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

function parseFrame(text) {
  let id = null;
  const data = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const c = line.indexOf(':');
    const field = c < 0 ? line : line.slice(0, c);
    let v = c < 0 ? '' : line.slice(c + 1);
    if (v.startsWith(' ')) v = v.slice(1);
    if (field === 'id') id = v;
    else if (field === 'data') data.push(v);
  }
  return data.length ? { id, data: data.join('\n') } : null;
}

// runOf is the run id of a frame id "<run id>-<n>".
export function runOf(frameID) {
  const i = (frameID || '').lastIndexOf('-');
  return i > 0 ? frameID.slice(0, i) : '';
}

// newAnswer is an empty assistant answer for model (the alias asked for).
export function newAnswer(model) {
  return {
    id: '', role: 'assistant', parts: [], metadata: {},
    model, runId: '', steps: [], status: 'streaming', finishReason: '', error: '', ttftMs: null, warnings: [],
  };
}

// step is the answer's current step (a round), made when a chunk comes before any start-step.
function step(a) {
  if (a.steps.length === 0) a.steps.push({ n: 1, tools: [], restarts: [], meta: null });
  return a.steps[a.steps.length - 1];
}

// currentStepParts are the parts after the last step-start, as the AI SDK counts them.
function currentStepStart(a) {
  let i = a.parts.length - 1;
  while (i >= 0 && a.parts[i].type !== 'step-start') i--;
  return i + 1;
}

function findPart(a, type, id) {
  for (let i = a.parts.length - 1; i >= 0; i--) {
    const p = a.parts[i];
    if (p.type === type && p.id === id) return p;
  }
  return null;
}

// isTool reports whether p is a tool part: "tool-<name>", or "dynamic-tool" (the gateway's
// own tools are sent as dynamic, provider-executed calls).
export function isTool(p) {
  return p.type === 'dynamic-tool' || p.type.startsWith('tool-');
}

// toolName is the name of a tool part.
export function toolName(p) {
  return p.type === 'dynamic-tool' ? p.toolName : p.type.slice('tool-'.length);
}

export function toolPart(a, id) {
  for (let i = a.parts.length - 1; i >= 0; i--) {
    const p = a.parts[i];
    if (p.toolCallId === id && isTool(p)) return p;
  }
  return null;
}

// merge merges metadata as the AI SDK does: objects member by member, the rest replaced.
export function merge(base, over) {
  if (!over || typeof over !== 'object' || Array.isArray(over)) return base;
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b) ? merge(b, v) : v;
  }
  return out;
}

function metadata(a, m) {
  if (!m) return;
  a.metadata = merge(a.metadata, m);
  if (typeof m.runId === 'string' && m.runId) a.runId = m.runId;
  // The first round with text has the answer's time to first token (from the request's
  // arrival, DESIGN §7); later rounds count from the same start, so only the first is kept.
  // Whole milliseconds: 0 with text is under a millisecond.
  if (a.ttftMs == null && typeof m.ttftMs === 'number' && (m.ttftMs > 0 || textOf(a))) a.ttftMs = m.ttftMs;
  if (typeof m.round === 'number') {
    const s = a.steps.find((x) => x.n === m.round);
    if (s) s.meta = m;
  }
}

// apply folds one chunk into a. Unknown chunk types are ignored (a newer gateway may send
// more; the page shows what it knows).
export function apply(a, c) {
  switch (c.type) {
    case 'start':
      if (c.messageId) a.id = c.messageId;
      metadata(a, c.messageMetadata);
      break;
    case 'start-step':
      a.parts.push({ type: 'step-start' });
      a.steps.push({ n: a.steps.length + 1, tools: [], restarts: [], meta: null });
      break;
    case 'finish-step':
      break;
    case 'text-start':
    case 'reasoning-start': {
      const type = c.type.slice(0, -'-start'.length);
      step(a);
      a.parts.push({ type, id: c.id, text: '', state: 'streaming' });
      break;
    }
    case 'text-delta':
    case 'reasoning-delta': {
      const type = c.type.slice(0, -'-delta'.length);
      let p = findPart(a, type, c.id);
      if (!p) {
        p = { type, id: c.id, text: '', state: 'streaming' };
        a.parts.push(p);
      }
      p.text += c.delta;
      break;
    }
    case 'text-end':
    case 'reasoning-end': {
      const p = findPart(a, c.type.slice(0, -'-end'.length), c.id);
      if (p) p.state = 'done';
      break;
    }
    case 'reset-step': {
      // The round restarts on the next target: what it streamed is dropped (ai@7), and the
      // page keeps the dropped text aside to show it struck through.
      const from = currentStepStart(a);
      const dropped = a.parts.splice(from);
      const text = dropped.filter((p) => p.type === 'text').map((p) => p.text).join('');
      const reasoning = dropped.filter((p) => p.type === 'reasoning').map((p) => p.text).join('');
      const s = step(a);
      s.restarts.push({ text, reasoning });
      s.tools = s.tools.filter((id) => !dropped.some((p) => p.toolCallId === id));
      break;
    }
    case 'tool-input-start':
    case 'tool-input-available':
    case 'tool-input-error': {
      let p = toolPart(a, c.toolCallId);
      if (!p) {
        p = c.dynamic ? { type: 'dynamic-tool', toolName: c.toolName } : { type: 'tool-' + c.toolName };
        Object.assign(p, { toolCallId: c.toolCallId, state: 'input-streaming', input: undefined });
        if (c.providerExecuted) p.providerExecuted = true;
        a.parts.push(p);
        step(a).tools.push(c.toolCallId);
      }
      if (c.type === 'tool-input-available') {
        p.state = 'input-available';
        p.input = c.input;
      } else if (c.type === 'tool-input-error') {
        p.state = 'output-error';
        p.input = c.input;
        p.errorText = c.errorText;
      }
      break;
    }
    case 'tool-output-available':
    case 'tool-output-error': {
      const p = toolPart(a, c.toolCallId);
      if (!p) break;
      if (c.type === 'tool-output-available') {
        p.state = 'output-available';
        p.output = c.output;
      } else {
        p.state = 'output-error';
        p.errorText = c.errorText;
      }
      break;
    }
    case 'message-metadata':
      metadata(a, c.messageMetadata);
      break;
    case 'error':
      a.error = c.errorText || 'The run failed.';
      a.status = 'error';
      break;
    case 'finish':
      metadata(a, c.messageMetadata);
      a.finishReason = c.finishReason || 'stop';
      if (a.status === 'streaming') a.status = 'finished';
      break;
    case 'abort':
      a.status = 'stopped';
      break;
    default:
      if (typeof c.type === 'string' && c.type.startsWith('data-')) data(a, c);
  }
}

// data folds a data part: updated in place when its id was seen (tool progress, DESIGN §8),
// appended otherwise; transient ones are not part of the message.
function data(a, c) {
  if (c.type === 'data-warning' && c.data) a.warnings.push(c.data.message || c.data.code || 'warning');
  if (c.transient) return;
  const p = c.id != null ? a.parts.find((x) => x.type === c.type && x.id === c.id) : null;
  if (p) p.data = c.data;
  else a.parts.push({ type: c.type, id: c.id, data: c.data });
}

// progressOf is the latest progress of a tool call ({done, total, message}), or null.
export function progressOf(a, toolCallId) {
  const p = a.parts.find((x) => x.type === 'data-tool-progress' && x.id === toolCallId);
  return p ? p.data || {} : null;
}

// toUIMessage is what the gateway is sent back as history: the AI SDK's UIMessage.
export function toUIMessage(m) {
  return { id: m.id, role: m.role, parts: m.parts, ...(m.metadata && Object.keys(m.metadata).length ? { metadata: m.metadata } : {}) };
}

// textOf is the answer's visible text.
export function textOf(a) {
  return a.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
}

// shortTarget is a target as the page shows it: a scripted simulated target
// ("sim/text?len=0&say=...") without its script, which is long and, in the demos, holds the
// very secret the redaction masks.
export function shortTarget(t) {
  const i = (t || '').indexOf('?');
  return i < 0 ? t : t.slice(0, i) + '?…';
}
