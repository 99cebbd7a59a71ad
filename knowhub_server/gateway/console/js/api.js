// The gateway's JSON API: POST /api/v1/{service}/{Method} with proto3 JSON bodies, named
// as in the .proto files (snake_case), enums by name, and the console's GET /api/overview.
// A hub with a tokens file: the bearer token a person signs in with is kept in
// sessionStorage (gone with the tab) and sent with every call. A local hub (no tokens
// file) signs its console in with the one-time link `knowhub up` prints: the gateway sets
// an HttpOnly cookie and puts the session's secret in the fragment of the console's URL;
// the secret is kept in this origin's storage (no other port reads it) and sent as
// X-KnowHub-Session. The console never holds a local hub's token. A call the hub refuses
// as UNAUTHENTICATED tells the shell (the "knowhub:unauthenticated" event), which shows
// its sign-in screen again.

const API_BASE = new URL("../../api/v1/", import.meta.url);
const OVERVIEW_URL = new URL("../../api/overview", import.meta.url);
const SESSION_URL = new URL("../../api/session", import.meta.url);
const TOKEN_KEY = "knowhub.console.token";
const SESSION_KEY = "knowhub.console.session";
export const UNAUTHENTICATED_EVENT = "knowhub:unauthenticated";
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
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

// Whether this gateway fronts a local hub, which signs its console in with links.
export function isLocal() {
  return session.local;
}

// Whether the console acts through a local hub's session.
export function usesSession() {
  return session.local && session.signed_in;
}

// Whether the console can call the hub: a local hub's session, else a token signed in with.
export function signedIn() {
  return session.local ? session.signed_in : Boolean(savedToken());
}

// Whether this gateway fronts a local hub, and whether the console's session is open.
export async function loadSession() {
  try {
    const response = await fetch(SESSION_URL, { headers: sessionHeaders() });
    session = response.ok ? await response.json() : { local: false, signed_in: false };
  } catch {
    session = { local: false, signed_in: false };
  }
  return session;
}

export function signIn(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

// Forgets the token signed in with, and ends a local hub's session at the gateway.
export async function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  if (!localStorage.getItem(SESSION_KEY)) return;
  await fetch(SESSION_URL, {
    method: "DELETE", headers: { "Content-Type": "application/json", ...sessionHeaders() },
  }).catch(() => null);
  localStorage.removeItem(SESSION_KEY);
  session = { ...session, signed_in: false };
}

function errorOf(response, data, text) {
  const error = (data && data.error) || {};
  const code = error.code || `HTTP ${response.status}`;
  const message = error.message || text.slice(0, 500) || response.statusText;
  return new ApiError(code, message, response.status);
}

async function request(url, init, what) {
  const headers = { ...(init.headers || {}), ...sessionHeaders() };
  const token = savedToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(url, { ...init, headers });
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
  if (!response.ok) {
    const error = errorOf(response, data, text);
    if (error.code === "UNAUTHENTICATED") window.dispatchEvent(new CustomEvent(UNAUTHENTICATED_EVENT, { detail: error }));
    throw error;
  }
  if (data === null) throw new ApiError("BAD_RESPONSE", `the gateway answered ${what} with something that is not JSON`, response.status);
  return data;
}

// Calls one RPC and returns its response message as a plain object. Unset message and
// optional fields are absent, so callers read them with fallbacks.
export function call(service, method, body = {}) {
  return request(new URL(`${service}/${method}`, API_BASE), {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  }, `${service}/${method}`);
}

// GET /api/overview: configuration, counts and recent failures (see the gateway).
export function overview() {
  return request(OVERVIEW_URL, {}, "overview");
}

// The overview, read once per page load for what the pages need of it (the knowledge
// types, whether a model is configured).
let hubPromise = null;
export function hubFacts() {
  hubPromise ||= overview().catch((error) => {
    hubPromise = null;
    throw error;
  });
  return hubPromise;
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
