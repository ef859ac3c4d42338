// Calls from the console to the gateway. The session is a cookie the browser sends by itself
// (same origin; HttpOnly, so no script here can read it); every change also carries the
// session's CSRF token, which GET /console/session gives and which is kept in this module's
// memory only, never in storage (a reload asks for it again). No admin token is kept
// anywhere: it is sent once, to sign in.

let csrf = '';
let me = null; // whom the session acts for: { user, role, teams }
let teamList = null; // the caller's team names, once read

// APIError is an answer that was not a success: status 0 when the gateway did not answer,
// param the member or filter the admin API named as wrong.
export class APIError extends Error {
  constructor(status, message, param = '') {
    super(message);
    this.status = status;
    this.param = param;
  }
}

async function failure(r) {
  try {
    const b = await r.json();
    return new APIError(r.status, b?.error?.message || `HTTP ${r.status}`, b?.error?.param || '');
  } catch {
    return new APIError(r.status, `HTTP ${r.status}`);
  }
}

// call makes one request; body (if any) goes as JSON. A 401 means the session is over: the
// page is told (console:signed-out) and asks to sign in again.
export async function call(method, path, body) {
  const headers = {};
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r;
  try {
    r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  } catch (e) {
    throw new APIError(0, `The gateway did not answer: ${e.message}`);
  }
  if (!r.ok) {
    const err = await failure(r);
    if (r.status === 401 && path.startsWith('/admin/')) document.dispatchEvent(new CustomEvent('console:signed-out'));
    throw err;
  }
  return r.status === 204 ? null : r.json();
}

export const get = (path) => call('GET', path);

// session asks whether this browser is signed in, and keeps the CSRF token if so.
export async function session() {
  const s = await call('GET', '/console/session');
  csrf = s.signed_in ? s.csrf : '';
  acting(s.signed_in ? s.who : null);
  return s;
}

export async function signIn(token) {
  const s = await call('POST', '/console/session', { token });
  csrf = s.csrf;
  acting(s.who);
  return s;
}

export async function signOut() {
  try {
    await call('DELETE', '/console/session');
  } finally {
    csrf = '';
    acting(null);
  }
}

function acting(w) {
  me = w || null;
  teamList = null;
}

// forgetTeams drops the team names read: the Teams page made or deleted one.
export function forgetTeams() {
  teamList = null;
}

// admin reports whether the session is admin's (or open: auth off, no roles): the pages
// offer what only admin may do, such as a key without a team, to admin alone. The admin
// API decides all the same.
export function admin() {
  return !me || me.role === 'admin';
}

// teams are the names of the teams the caller acts in: admin's are every team (GET
// /admin/teams; none when the gateway has no team routes), the others' those of their
// session, which the admin API scopes them to. Read once a session.
export async function teams() {
  if (teamList) return teamList;
  if (!admin()) {
    teamList = [...(me.teams || [])].sort();
    return teamList;
  }
  try {
    const r = await get('/admin/teams');
    teamList = (r.data || []).map((t) => t.name).sort();
  } catch {
    return []; // no team routes (auth off), or not now: asked again next time
  }
  return teamList;
}

// query is the search string of params, without the empty ones.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  return q.toString();
}
