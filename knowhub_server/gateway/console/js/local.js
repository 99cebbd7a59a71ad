// The local hub's bootstrap: a gateway in front of a hub without a tokens file hands its
// own console the hub's local token (a page on another origin cannot ask for it). Kept
// apart so the way a local console gets its credential can change in this one place.

const LOCAL_TOKEN_URL = new URL("../../api/local-token", import.meta.url);

// The local hub's token, or "" when the hub uses a tokens file (or cannot be asked).
export async function localHubToken() {
  try {
    const response = await fetch(LOCAL_TOKEN_URL, { headers: { "X-KnowHub-Console": "1" } });
    return response.ok ? (await response.json()).token || "" : "";
  } catch {
    return "";
  }
}
