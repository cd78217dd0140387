// The console's start: the session decides between the sign-in form and
// the screens; the address's hash (#/files?folder=a/b, #/keys…) picks the screen.

import { session, signIn, signOut, whenSignedOut } from './api.js';
import { clear, h, toast, failed } from './ui.js';

const screens = {
  files: () => import('./files.js'),
  keys: () => import('./keys.js'),
  tokens: () => import('./tokens.js'),
  webhooks: () => import('./webhooks.js'),
  usage: () => import('./usage.js'),
};

const $ = (id) => document.getElementById(id);
export const state = { who: null };

function showSignIn(message) {
  state.who = null;
  $('app').hidden = true;
  clear($('main'));
  $('signin').hidden = false;
  $('signin-error').textContent = message || '';
  $('signin-key').value = '';
  $('signin-key').focus();
  document.title = 'Sign in · filestore console';
}

function showApp(who) {
  state.who = who;
  $('signin').hidden = true;
  $('app').hidden = false;
  $('who').textContent = `${who.account.name} · ${who.plan}`;
  route();
}

let routing = 0;
async function route() {
  if (!state.who) return;
  const [path, q] = (location.hash.replace(/^#\/?/, '') || 'files').split('?');
  const name = screens[path] ? path : 'files';
  const params = new URLSearchParams(q || '');
  for (const a of document.querySelectorAll('.nav a')) {
    if (a.dataset.screen === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const mine = ++routing;
  const main = $('main');
  main.setAttribute('aria-busy', 'true');
  try {
    const mod = await screens[name]();
    if (mine !== routing) return;
    await mod.render(main, params, state);
  } catch (e) {
    if (mine === routing && e.status !== 401) {
      clear(main, h('h1', {}, 'Something went wrong'), h('p', { class: 'error' }, e.message));
    }
  } finally {
    if (mine === routing) main.removeAttribute('aria-busy');
  }
}

export function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

$('signin-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const button = ev.submitter || $('signin-form').querySelector('button');
  button.disabled = true;
  try {
    const who = await signIn($('signin-key').value);
    $('signin-key').value = '';
    showApp(who);
  } catch (e) {
    $('signin-error').textContent = e.message;
  } finally {
    button.disabled = false;
  }
});

$('signout').addEventListener('click', async () => {
  try {
    await signOut();
  } catch (e) {
    failed(e);
  }
  showSignIn('Signed out.');
});

whenSignedOut((message) => {
  if (state.who) {
    showSignIn(message);
    toast('Your session has ended: sign in again.', { error: true });
  }
});

window.addEventListener('hashchange', route);
// A file dropped outside the Files screen's area is not opened by the browser.
for (const type of ['dragover', 'drop']) window.addEventListener(type, (e) => e.preventDefault());

session().then((who) => (who ? showApp(who) : showSignIn()), (e) => showSignIn(e.message));
