// The console: sign-in, the pages (Logs, Usage, Keys, Teams, Health, Audit) as tabs routed by the
// URL's hash (#logs, #logs/<request id>, #usage, #keys, #teams, #health, #audit), so that a request's detail has a
// link and the back button works. Each page module shows itself when its tab is selected and
// stops its timers and streams when it is left.
import { h } from '/playground/dom.js';
import { session, signIn, signOut, teams as teamNames, APIError } from './api.js';
import * as logs from './logs.js';
import * as usage from './usage.js';
import * as keys from './keys.js';
import * as teams from './teams.js';
import * as health from './health.js';
import * as audit from './audit.js';

const $ = (id) => document.getElementById(id);
const pages = { logs, usage, keys, teams, health, audit };
const names = Object.keys(pages);
let current = '';
let signedIn = false;

function notice(text) {
  $('notice').textContent = text;
}

// route reads the hash: the page and what follows its name (a request id).
function route() {
  const h = decodeURIComponent(location.hash.slice(1));
  const [name, ...rest] = h.split('/');
  return names.includes(name) ? [name, rest.join('/')] : ['logs', ''];
}

function render() {
  if (!signedIn) return;
  const [name, arg] = route();
  if (current && current !== name) pages[current].hide();
  for (const n of names) {
    const on = n === name;
    $('tab-' + n).setAttribute('aria-selected', String(on));
    $('tab-' + n).tabIndex = on ? 0 : -1;
    $('view-' + n).hidden = !on;
  }
  current = name;
  pages[name].show(arg);
}

function showSignIn(why) {
  signedIn = false;
  if (current) pages[current].hide();
  current = '';
  $('pages').hidden = true;
  $('sign-out').hidden = true;
  for (const n of names) $('view-' + n).hidden = true;
  $('sign-in').hidden = false;
  $('sign-in-error').textContent = why || '';
  $('token').focus();
}

// providers offers a link per OpenID Connect issuer: the browser leaves for the issuer's
// sign-in and comes back to this page (return_to: a path of the console only).
function providers(list) {
  const box = $('sign-in-oidc');
  box.replaceChildren();
  for (const p of list || []) {
    const a = document.createElement('a');
    a.className = 'button';
    a.href = `${p.login}?return_to=${encodeURIComponent('/console/' + location.hash)}`;
    a.textContent = `Sign in with ${p.name}`;
    box.append(a);
  }
}

// whoami shows whom the session acts for: its user, role and teams.
// The role is on the body too: controls of what only admin may do (a team's creation,
// limits, deletion) are hidden from the others (console.css, .admin-only); the admin API
// refuses them all the same.
function whoami(w) {
  $('who').textContent = w ? `${w.user} · ${w.role}${(w.teams || []).length ? ' · ' + w.teams.join(', ') : ''}` : '';
  document.body.dataset.role = w ? w.role : '';
}

// suggest offers the caller's teams in the team filters of Logs and Usage (a datalist: any
// name may still be typed, and one the caller does not see answers nothing).
async function suggest() {
  const names = await teamNames();
  $('team-names').replaceChildren(...names.map((n) => h('option', { value: n })));
}

function showConsole() {
  signedIn = true;
  $('sign-in').hidden = true;
  $('pages').hidden = false;
  $('sign-out').hidden = false;
  notice('');
  render();
  suggest();
}

function tabs() {
  for (const n of names) {
    const tab = $('tab-' + n);
    tab.addEventListener('click', () => {
      location.hash = '#' + n;
    });
    // Arrow keys move between tabs (the WAI-ARIA tabs pattern).
    tab.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      const next = names[(names.indexOf(n) + (e.key === 'ArrowRight' ? 1 : names.length - 1)) % names.length];
      location.hash = '#' + next;
      $('tab-' + next).focus();
    });
  }
  window.addEventListener('hashchange', render);
}

async function main() {
  tabs();
  for (const p of Object.values(pages)) p.init();
  $('sign-in').addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = $('token');
    const token = input.value;
    if (!token) return;
    try {
      whoami((await signIn(token)).who);
      input.value = ''; // the token is not kept: the cookie holds the session
      showConsole();
    } catch (err) {
      $('sign-in-error').textContent = err.status === 401 ? 'This is neither the admin token nor a live personal token.' : err.message;
      input.select();
    }
  });
  $('sign-out').addEventListener('click', async () => {
    try {
      await signOut();
    } catch (err) {
      notice(`Signing out failed: ${err.message}`);
      return;
    }
    whoami(null);
    showSignIn('');
    notice('Signed out: the session is ended on every replica.');
  });
  document.addEventListener('console:signed-out', () => showSignIn('The session has ended: sign in again.'));
  try {
    const s = await session();
    if (!s.signed_in && s.open) await signIn(''); // auth is off on loopback: no token to ask for
    providers(s.providers);
    whoami(s.who);
    if (s.signed_in || s.open) showConsole();
    else showSignIn('');
  } catch (err) {
    if (err instanceof APIError && err.status === 404) notice('This gateway serves no console session: is auth.admin_token set?');
    else notice(err.message);
    showSignIn('');
  }
}

main();
