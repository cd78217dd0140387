// The /v1 API and the console's session, as the page speaks them: every
// request carries X-Filestore-Console: 1 (the server accepts the session
// cookie only with it) and the cookie the browser keeps (HttpOnly: never
// readable here).

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onSignedOut = () => {};
export function whenSignedOut(f) { onSignedOut = f; }

export const PAGE_HEADER = { 'X-Filestore-Console': '1' };

async function failure(r) {
  let code = 'error';
  let message = `${r.status} ${r.statusText}`;
  try {
    const body = await r.json();
    if (body && body.error) ({ code, message } = body.error);
  } catch { /* not JSON */ }
  return new ApiError(r.status, code, message);
}

// A request; its JSON (null for an empty answer), or the Response itself with raw.
export async function api(method, path, { json, body, headers, raw } = {}) {
  const h = { ...PAGE_HEADER, ...headers };
  if (json !== undefined) {
    h['Content-Type'] = 'application/json';
    body = JSON.stringify(json);
  }
  const r = await fetch(path, { method, headers: h, body, credentials: 'same-origin' });
  if (!r.ok) {
    const e = await failure(r);
    if (r.status === 401 && !path.startsWith('/console/session')) onSignedOut(e.message);
    throw e;
  }
  if (raw) return r;
  if (r.status === 204) return null;
  const type = r.headers.get('content-type') || '';
  return type.includes('json') ? r.json() : null;
}

export const get = (path) => api('GET', path);
export const post = (path, json) => api('POST', path, { json });
export const patch = (path, json) => api('PATCH', path, { json });
export const del = (path) => api('DELETE', path);

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// The session: who is signed in (null when no one), sign-in, sign-out.
export async function session() {
  try {
    return await api('GET', '/console/session');
  } catch (e) {
    if (e.status === 401) return null;
    throw e;
  }
}
export const signIn = (key) => api('POST', '/console/session', { json: { key } });
export const signOut = () => api('DELETE', '/console/session');
