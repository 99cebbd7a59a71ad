// The console's shell: the nav, signing in and out, and a hash router
// (#/page/arg/...?name=value).

import {
  UNAUTHENTICATED_EVENT, call, isLocal, loadSession, signIn, signOut, signedIn, usesSession,
} from "./api.js";
import { errorBox, h } from "./dom.js";
import * as dream from "./pages/dream.js";
import * as forget from "./pages/forget.js";
import * as knowledge from "./pages/knowledge.js";
import * as memory from "./pages/memory.js";
import * as overview from "./pages/overview.js";
import * as resources from "./pages/resources.js";
import * as review from "./pages/review.js";
import * as trace from "./pages/trace.js";

const PAGES = { overview, knowledge, resources, memory, review, trace, dream, forget };
const main = document.getElementById("main");
const account = document.getElementById("account");
let renderCount = 0;

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const split = hash.indexOf("?");
  const [page, ...args] = (split < 0 ? hash : hash.slice(0, split)).split("/");
  return {
    page: PAGES[page] ? page : "overview",
    args: args.filter(Boolean).map(decodeURIComponent),
    params: new URLSearchParams(split < 0 ? "" : hash.slice(split + 1)),
  };
}

// Renders the current route into a fresh view. A view replaced while its page is still
// loading is detached, so late answers land nowhere.
async function render() {
  if (!signedIn()) {
    showSignIn();
    return;
  }
  const { page, args, params } = route();
  const count = ++renderCount;
  for (const item of document.querySelectorAll("#nav a")) {
    item.classList.toggle("active", item.dataset.page === page);
  }
  const view = h("div", { class: `page page-${page}`, "data-page": page });
  main.replaceChildren(view);
  showAccount();
  try {
    await PAGES[page].render(view, args, params);
  } catch (error) {
    if (count === renderCount && error.code !== "UNAUTHENTICATED") view.append(errorBox(error));
  }
}

function showAccount() {
  document.body.classList.remove("signed-out");
  const state = usesSession() ? "local hub (signed in with a link)" : "signed in with a token";
  account.replaceChildren(h("span", { class: "muted", id: "token-state" }, state),
    h("button", { type: "button", id: "sign-out", onclick: async () => { await signOut(); render(); } },
      "Sign out"));
}

// The sign-in screen: a local hub's says where its sign-in link is; a hub with tokens asks
// for one from its tokens file. `refusal` says why the last attempt did not work.
function showSignIn(refusal) {
  renderCount++;
  document.body.classList.add("signed-out");
  account.replaceChildren();
  main.replaceChildren(isLocal() ? localSignIn(refusal) : tokenSignIn(refusal));
  main.querySelector("input")?.focus();
}

function localSignIn(refusal) {
  const panel = h("div", { id: "local-sign-in", class: "panel sign-in" },
    h("h1", {}, "Sign in to KnowHub"),
    h("p", {}, "This is a local hub (no tokens file): its console signs in with a one-time link. ",
      "Open the link ", h("code", {}, "knowhub up"), " printed, or run ", h("code", {}, "knowhub console-link"),
      " on this machine for a new one."),
    h("p", { class: "muted" }, "A link works once, within minutes; the session it opens lasts until you sign out, ",
      "it expires, or the hub stops."));
  if (refusal) {
    panel.append(h("div", { class: "error", role: "alert" }, h("strong", {}, "The session ended. "),
      `Open a new sign-in link. (${refusal.code}: ${refusal.message})`));
  }
  return panel;
}

function tokenSignIn(refusal) {
  const input = h("input", { id: "sign-in-token", type: "password", autocomplete: "off", size: 48,
    placeholder: "paste a bearer token", required: true, "aria-label": "bearer token" });
  const slot = h("div", { id: "sign-in-error" });
  const form = h("form", { id: "sign-in", class: "panel sign-in" },
    h("h1", {}, "Sign in to KnowHub"),
    h("p", {}, "This hub uses tokens. Paste a bearer token from its tokens file (",
      h("code", {}, "KNOWHUB_TOKENS_FILE"), "). It stays in this browser tab only and is sent with every call."),
    slot, h("div", { class: "row" }, input, h("button", { type: "submit", class: "primary" }, "Sign in")));
  if (refusal) slot.append(refused(refusal));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    signIn(token);
    try {
      await call("knowledge", "ListKnowledge", { page_size: 1 });
    } catch (error) {
      if (error.code === "UNAUTHENTICATED") return; // the sign-in screen is shown again, saying so
    }
    render();
  });
  return form;
}

function refused(error) {
  return h("div", { class: "error", role: "alert" }, h("strong", {}, "The hub did not accept this token. "),
    `Check it and try again, or ask for a new one. (${error.code}: ${error.message})`);
}

window.addEventListener(UNAUTHENTICATED_EVENT, async (event) => {
  await signOut();
  showSignIn(event.detail);
});
await loadSession();
window.addEventListener("hashchange", render);
render();
