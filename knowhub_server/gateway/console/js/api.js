// The gateway's JSON API: POST /api/v1/{service}/{Method} with proto3 JSON bodies, named
// as in the .proto files (snake_case), enums by name, and the console's GET /api/overview.
// The bearer token a person signs in with is kept in sessionStorage (gone with the tab)
// and sent with every call; a hub without tokens hands its console a token of its own
// (local.js), kept in memory only. A call the hub refuses as UNAUTHENTICATED tells the
// shell (the "knowhub:unauthenticated" event), which asks for a token again.

const API_BASE = new URL("../../api/v1/", import.meta.url);
const OVERVIEW_URL = new URL("../../api/overview", import.meta.url);
const TOKEN_KEY = "knowhub.console.token";
export const UNAUTHENTICATED_EVENT = "knowhub:unauthenticated";
let hubToken = "";

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

export function getToken() {
  return savedToken() || hubToken;
}

export function usesHubToken() {
  return !savedToken() && Boolean(hubToken);
}

// The token a local hub gave its console (see local.js); "" when the hub uses tokens.
export function setHubToken(token) {
  hubToken = token || "";
}

export function signIn(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
}

function errorOf(response, data, text) {
  const error = (data && data.error) || {};
  const code = error.code || `HTTP ${response.status}`;
  const message = error.message || text.slice(0, 500) || response.statusText;
  return new ApiError(code, message, response.status);
}

async function request(url, init, what) {
  const headers = { ...(init.headers || {}) };
  const token = getToken();
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
