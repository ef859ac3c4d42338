// The virtual key the page calls /v1 with, when the gateway has auth on: asked for when an
// answer is 401, kept in sessionStorage only (this tab, until it closes), sent as Bearer.
// The admin token is admin.js's, kept apart: a virtual key never goes to /admin.

const $ = (id) => document.getElementById(id);
const KEY = 'sluice.key';

// api fetches path on the gateway with the virtual key, if any.
export function api(path, init = {}) {
  const key = sessionStorage.getItem(KEY);
  const headers = new Headers(init.headers || {});
  if (key) headers.set('Authorization', 'Bearer ' + key);
  return fetch(path, { ...init, headers });
}

// keyNeeded shows the key form, with why (the gateway's message) when a key was refused.
export function keyNeeded(why) {
  const form = $('key-form');
  form.hidden = false;
  $('key-error').textContent = sessionStorage.getItem(KEY) ? why : '';
  $('key-input').focus();
}

// initKey wires the key form and button; changed runs after a key was set or forgotten.
export function initKey(changed) {
  const form = $('key-form');
  const button = $('key-button');
  button.hidden = !sessionStorage.getItem(KEY);
  button.addEventListener('click', () => {
    form.hidden = !form.hidden;
    if (!form.hidden) $('key-input').focus();
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const key = $('key-input').value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY, key);
    $('key-input').value = '';
    form.hidden = true;
    button.hidden = false;
    changed();
  });
  $('key-forget').addEventListener('click', () => {
    sessionStorage.removeItem(KEY);
    $('key-input').value = '';
    button.hidden = true;
    changed();
  });
}
