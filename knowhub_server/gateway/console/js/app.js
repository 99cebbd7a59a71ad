// The console's shell: the token form, the nav and a hash router (#/page/arg/...?name=value).

import { loadSession, needsSignIn, savedToken, setToken, signOut, usesSession } from "./api.js";
import { errorBox, h } from "./dom.js";
import * as dream from "./pages/dream.js";
import * as knowledge from "./pages/knowledge.js";
import * as review from "./pages/review.js";
import * as trace from "./pages/trace.js";

const PAGES = { review, knowledge, trace, dream };
const main = document.getElementById("main");
let renderCount = 0;

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const split = hash.indexOf("?");
  const [page, ...args] = (split < 0 ? hash : hash.slice(0, split)).split("/");
  return {
    page: PAGES[page] ? page : "review",
    args: args.filter(Boolean).map(decodeURIComponent),
    params: new URLSearchParams(split < 0 ? "" : hash.slice(split + 1)),
  };
}

// Renders the current route into a fresh view. A view replaced while its page is still
// loading is detached, so late answers land nowhere.
async function render() {
  const { page, args, params } = route();
  const count = ++renderCount;
  for (const item of document.querySelectorAll("#nav a")) {
    item.classList.toggle("active", item.dataset.page === page);
  }
  const view = h("div", { class: `page page-${page}`, "data-page": page });
  main.replaceChildren(view);
  try {
    await PAGES[page].render(view, args, params);
  } catch (error) {
    if (count === renderCount) view.append(errorBox(error));
  }
}

function showTokenState() {
  const state = savedToken() ? "token saved" : usesSession() ? "local hub"
    : needsSignIn() ? "sign in: open the link `knowhub up` printed (or run `knowhub console-link`)"
    : "no token";
  document.getElementById("token-state").textContent = state;
  document.getElementById("sign-out").hidden = !usesSession();
}

await loadSession();
document.getElementById("token-input").value = savedToken();
document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  setToken(document.getElementById("token-input").value.trim());
  showTokenState();
  render();
});
document.getElementById("sign-out").addEventListener("click", async () => {
  await signOut();
  showTokenState();
  render();
});
window.addEventListener("hashchange", render);
showTokenState();
render();
