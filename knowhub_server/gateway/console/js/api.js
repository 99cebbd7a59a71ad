// The gateway's JSON API: POST /api/v1/{service}/{Method} with proto3 JSON bodies, named
// as in the .proto files (snake_case), enums by name.
// The bearer token is kept in localStorage and sent with every call. Without one, a
// gateway in front of a local hub (no tokens file) hands its console the hub's local
// token; a page on another origin cannot ask for it.

const API_BASE = new URL("../../api/v1/", import.meta.url);
const LOCAL_TOKEN_URL = new URL("../../api/local-token", import.meta.url);
const TOKEN_KEY = "knowhub.console.token";
let localToken = "";

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

export function getToken() {
  return savedToken() || localToken;
}

export function usesLocalToken() {
  return !savedToken() && Boolean(localToken);
}

// Asks the gateway for the local hub's token (none when the hub uses a tokens file).
export async function loadLocalToken() {
  try {
    const response = await fetch(LOCAL_TOKEN_URL, { headers: { "X-KnowHub-Console": "1" } });
    localToken = response.ok ? (await response.json()).token || "" : "";
  } catch {
    localToken = "";
  }
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
  const headers = { "Content-Type": "application/json" };
  const token = getToken();
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
