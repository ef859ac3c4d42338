// The page builds every element with h(): text goes in through text nodes only, never as
// HTML, so nothing a model says can become markup or script (the CSP's Trusted Types would
// make the browser throw if a string ever reached innerHTML).

// h creates an element: attrs are properties (className, hidden, value, ...) or, for names
// with a dash (aria-*, data-*), attributes; children are nodes or strings (as text).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k.includes('-')) el.setAttribute(k, String(v));
    else el[k] = v;
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

// setText replaces an element's content with text, writing only when it changed (a stream
// re-renders often; rewriting the same text would reset a selection).
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

// clear removes an element's children.
export function clear(el) {
  el.replaceChildren();
}
