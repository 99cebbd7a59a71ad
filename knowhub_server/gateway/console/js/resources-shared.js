// A resource as the console shows it, wherever it appears: title, body, facts, and its
// secure body only on an explicit Reveal, which asks GetResource with include_secure (the
// server decides and audits the read); Hide drops it from the page again.

import { call } from "./api.js";
import { badge, button, fields, guarded, h, list, pre, when } from "./dom.js";

export const contentType = (resource) =>
  (resource.content_type || "").replace("RESOURCE_CONTENT_TYPE_", "").toLowerCase() || "text";

export function resourceDetails(resource) {
  return [
    h("div", { class: "row" }, h("strong", {}, resource.title), h("span", { class: "muted" }, resource.id),
      badge(contentType(resource)),
      resource.expired ? badge("expired", "failed") : null, resource.deleted ? badge("deleted", "failed") : null),
    pre(resource.body, { class: "resource-body" }),
    fields([
      ["Version", resource.version || "1"],
      ["Owner", resource.owner],
      ["Scopes", list(resource.scopes)],
      ["Updated", when(resource.updated_at)],
      ["Expires", resource.expires_at ? when(resource.expires_at) : "never"],
      ["Secure body", resource.has_secure_body ? "yes" : "none"],
    ]),
    resource.has_secure_body ? secureBody(resource.id, resource.version) : null,
  ];
}

// The hidden secure body of one version, with its Reveal button.
export function secureBody(id, version) {
  const slot = h("div", { class: "secure" });
  hide(slot, id, version);
  return slot;
}

function hide(slot, id, version) {
  slot.replaceChildren(h("span", { class: "muted secure-hidden" }, "Secure body hidden. "),
    button("Reveal secure body", () => reveal(slot, id, version), { class: "reveal" }));
}

async function reveal(slot, id, version) {
  const response = await guarded(slot, () => call("resource", "GetResource", { id, include_secure: true, version }));
  if (!response) return;
  slot.replaceChildren(h("h3", {}, "Secure body"), pre(response.resource.secure_body || "", { class: "secret secure-body" }),
    button("Hide", () => hide(slot, id, version), { class: "hide" }));
}
