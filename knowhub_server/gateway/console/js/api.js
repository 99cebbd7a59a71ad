// The gateway's JSON API: POST /api/v1/{service}/{Method} with proto3 JSON bodies, named
// as in the .proto files (snake_case), enums by name.
// A bearer token typed in is kept in localStorage and sent with every call. A local hub
// (no tokens file) signs its console in with the one-time link `knowhub up` prints: the
// gateway sets an HttpOnly cookie and puts the session's secret in the fragment of the
// console's URL; the secret is kept in this origin's storage (no other port reads it) and
// sent as X-KnowHub-Session. The console never holds the hub's token.

const API_BASE = new URL("../../api/v1/", import.meta.url);
const SESSION_URL = new URL("../../api/session", import.meta.url);
const TOKEN_KEY = "knowhub.console.token";
const SESSION_KEY = "knowhub.console.session";
let session = { local: false, signed_in: false };

(function takeSessionFromUrl() {
  const match = location.hash.match(/^#session=([A-Za-z0-9_-]+)$/);
  if (!match) return;
  localStorage.setItem(SESSION_KEY, match[1]);
  history.replaceState(null, "", location.pathname + location.search);
})();

function sessionHeaders() {
  const secret = localStorage.getItem(SESSION_KEY);
  return secret ? { "X-KnowHub-Session": secret } : {};
}

export class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
  }
}

export function savedToken() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

// Whether the console acts through a local hub's session (and no token typed in).
export function usesSession() {
  return !savedToken() && session.signed_in;
}

// Whether this gateway fronts a local hub whose console is not signed in (and no token typed in).
export function needsSignIn() {
  return !savedToken() && session.local && !session.signed_in;
}

// Whether this gateway fronts a local hub (signed in with links), and whether the session is open.
export async function loadSession() {
  try {
    const response = await fetch(SESSION_URL, { headers: sessionHeaders() });
    session = response.ok ? await response.json() : { local: false, signed_in: false };
  } catch {
    session = { local: false, signed_in: false };
  }
  return session;
}

export async function signOut() {
  await fetch(SESSION_URL, {
    method: "DELETE", headers: { "Content-Type": "application/json", ...sessionHeaders() },
  }).catch(() => null);
  localStorage.removeItem(SESSION_KEY);
  session = { ...session, signed_in: false };
}

export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

function errorOf(response, data, text) {
  const error = (data && data.error) || {};
  const code = error.code || `HTTP ${response.status}`;
  const message = error.message || text.slice(0, 500) || response.statusText;
  return new ApiError(code, message, response.status);
}

// Calls one RPC and returns its response message as a plain object. Unset message and
// optional fields are absent, so callers read them with fallbacks.
export async function call(service, method, body = {}) {
  const headers = { "Content-Type": "application/json", ...sessionHeaders() };
  const token = savedToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(new URL(`${service}/${method}`, API_BASE), {
      method: "POST", headers, body: JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError("UNAVAILABLE", `could not reach the gateway: ${error.message}`, 0);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = null;
  }
  if (!response.ok) throw errorOf(response, data, text);
  if (data === null) throw new ApiError("BAD_RESPONSE", `the gateway answered ${service}/${method} with something that is not JSON`, response.status);
  return data;
}

// Every item of a paged list RPC (`field` of each page), following next_page_token up to
// `maxPages` pages.
export async function callAll(service, method, body, field, maxPages = 20) {
  const items = [];
  let page_token = "";
  for (let page = 0; page < maxPages; page++) {
    const response = await call(service, method, { ...body, page_token });
    items.push(...(response[field] || []));
    page_token = response.next_page_token || "";
    if (!page_token) break;
  }
  return items;
}
