// Resources: the visible resources (by path prefix and type, or a text search), one
// resource with its kept versions (each version's secure body only on an explicit Reveal),
// a form to save a new resource or a new version, delete and undelete, and the audit log
// (admins only; the server refuses anyone else).

import { call } from "../api.js";
import { contentType, resourceDetails, secureBody } from "../resources-shared.js";
import {
  badge, button, empty, guarded, h, link, loading, section, table, when,
} from "../dom.js";

const TYPES = ["TEXT", "CODE", "CREDENTIAL", "COOKIE"];
const resourceHash = (id) => `#/resources/${encodeURIComponent(id)}`;

export async function render(view, args) {
  if (args.length) await renderResource(view, args.join("/"));
  else await renderList(view);
}

function typeSelect(id, anyText) {
  return h("select", { id }, anyText ? h("option", { value: "" }, anyText) : null,
    TYPES.map((name) => h("option", { value: `RESOURCE_CONTENT_TYPE_${name}` }, name.toLowerCase())));
}

// ---- The list ------------------------------------------------------------------------

async function renderList(view) {
  const query = h("input", { id: "resource-query", type: "search", placeholder: "search title and body", size: 30 });
  const prefix = h("input", { id: "resource-prefix", placeholder: "path prefix, e.g. creds/", size: 20 });
  const type = typeSelect("resource-type", "any type");
  const deleted = h("input", { id: "resource-deleted", type: "checkbox" });
  const results = h("div", { id: "resource-list" });
  const form = h("form", { class: "row" }, query, prefix, type,
    h("label", {}, deleted, " show deleted and expired"), h("button", { type: "submit", class: "primary" }, "Show"));
  const show = () => (query.value.trim()
    ? search(results, { query: query.value.trim(), top_k: 50, include_expired: deleted.checked, ...(type.value ? { content_type: type.value } : {}) })
    : listPages(results, { prefix: prefix.value.trim(), show_deleted: deleted.checked, include_expired: deleted.checked,
      page_size: 50, ...(type.value ? { content_type: type.value } : {}) }));
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  type.addEventListener("change", show);
  const audit = h("section", { class: "panel", id: "audit-log" });
  view.append(h("h1", {}, "Resources"), saveForm(), form, results, audit);
  await show();
  await showAudit(audit, "");
}

function resourceRow(resource, relevance) {
  return h("tr", { class: "resource-row", "data-resource-id": resource.id },
    h("td", {}, link(resourceHash(resource.id), resource.title || resource.id), h("div", { class: "muted" }, resource.id)),
    h("td", {}, badge(contentType(resource))),
    h("td", {}, resource.version || "1"),
    h("td", {}, resource.has_secure_body ? "yes (hidden)" : "—",
      resource.deleted ? [" ", badge("deleted", "failed")] : null, resource.expired ? [" ", badge("expired", "failed")] : null),
    h("td", {}, resource.owner || ""),
    relevance === undefined ? null : h("td", {}, relevance.toFixed(2)),
    h("td", { class: "nowrap" }, when(resource.updated_at)));
}

const HEADERS = ["Resource", "Type", "Version", "Secure body", "Owner"];

async function search(results, body) {
  results.replaceChildren(loading());
  const response = await guarded(results, () => call("resource", "SearchResources", body));
  if (!response) return;
  const hits = response.hits || [];
  results.append(hits.length ? table([...HEADERS, "Relevance", "Updated"], hits.map((hit) => resourceRow(hit.resource, hit.relevance)))
    : empty("Nothing matches."));
}

async function listPages(results, body) {
  results.replaceChildren(loading());
  const rows = h("tbody");
  const slot = h("div");
  const more = button("More", () => next(), { hidden: true });
  let page_token = "";
  const next = async () => {
    more.disabled = true;
    const response = await guarded(slot, () => call("resource", "ListResources", { ...body, page_token }));
    if (!response) return;
    rows.append(...(response.resources || []).map((resource) => resourceRow(resource)));
    page_token = response.next_page_token || "";
    more.disabled = !page_token;
    more.hidden = !page_token;
  };
  results.replaceChildren(h("table", {}, h("thead", {}, h("tr", {}, [...HEADERS, "Updated"].map((title) => h("th", {}, title)))), rows), slot, more);
  await next();
  if (!rows.children.length && !slot.children.length) results.replaceChildren(empty("No resources visible to this token."));
}

// ---- Save (a new resource, or a new version of one) ----------------------------------------

function saveForm(resource) {
  const id = h("input", { name: "id", placeholder: "path-like id, e.g. creds/staging/login", value: resource ? resource.id : "", readonly: Boolean(resource) });
  const title = h("input", { name: "title", value: resource ? resource.title : "" });
  const type = typeSelect("save-type");
  if (resource) type.value = resource.content_type;
  const body = h("textarea", { name: "body", value: resource ? resource.body : "" });
  const secure = h("textarea", { name: "secure_body", class: "secret", placeholder: resource && resource.has_secure_body
    ? "the new version's secure body (a save replaces it: leave empty and the new version has none)" : "optional: encrypted at rest, shown only on Reveal" });
  const slot = h("div");
  const form = h("form", { class: "edit save-resource" },
    h("label", {}, "Id"), id, h("label", {}, "Title"), title, h("label", {}, "Type"), type,
    h("label", {}, "Body (searchable)"), body, h("label", {}, "Secure body"), secure, slot,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, resource ? "Save new version" : "Save resource")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const request = { id: id.value.trim(), title: title.value, body: body.value, secure_body: secure.value, content_type: type.value,
      ...(resource ? { expected_version: resource.version } : {}) };
    const saved = await guarded(slot, () => call("resource", "SaveResource", request));
    if (!saved) return;
    if (location.hash === resourceHash(saved.resource.id)) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else location.hash = resourceHash(saved.resource.id);
  });
  if (resource) return section("New version", form);
  return h("details", { class: "panel", id: "new-resource" }, h("summary", {}, h("strong", {}, "New resource")), form);
}

// ---- One resource --------------------------------------------------------------------------

async function renderResource(view, id) {
  view.append(h("p", {}, link("#/resources", "← all resources")));
  const slot = h("div");
  view.append(slot);
  const response = await guarded(slot, () => call("resource", "GetResource", { id }));
  if (!response) return;
  const resource = response.resource;
  const versions = h("section", { class: "panel", id: "resource-versions" }, h("h2", {}, "Versions"), loading());
  const audit = h("section", { class: "panel", id: "audit-log" });
  view.append(h("h1", { class: "resource-title" }, resource.title),
    h("section", { class: "panel card resource", "data-resource-id": resource.id }, resourceDetails(resource), lifecycle(resource)),
    versions, saveForm(resource), audit);
  await Promise.all([showVersions(versions, resource), showAudit(audit, resource.id)]);
}

function lifecycle(resource) {
  const slot = h("div");
  const method = resource.deleted ? "UndeleteResource" : "DeleteResource";
  return h("div", {}, h("div", { class: "actions" }, button(resource.deleted ? "Undelete" : "Delete", async () => {
    if (await guarded(slot, () => call("resource", method, { id: resource.id }))) window.dispatchEvent(new HashChangeEvent("hashchange"));
  }, { class: resource.deleted ? "undelete" : "danger delete" })), slot);
}

async function showVersions(panel, resource) {
  const response = await guarded(panel, () => call("resource", "ListResourceVersions", { id: resource.id }));
  if (!response) return;
  const versions = response.versions || [];
  panel.replaceChildren(h("h2", {}, "Versions"), versions.length ? table(["Version", "Saved", "By", "Secure body", ""],
    versions.map((version) => h("tr", { class: "resource-version", "data-version": version.version },
      h("td", {}, version.version, version.deleted ? [" ", badge("deleted", "failed")] : null),
      h("td", { class: "nowrap" }, when(version.created_at)), h("td", {}, version.saved_by || ""),
      h("td", {}, version.has_secure_body && !version.deleted ? secureBody(resource.id, version.version) : (version.has_secure_body ? "yes (deleted)" : "—")),
      h("td", {}, button("Show", async () => {
        const shown = await guarded(detail, () => call("resource", "GetResource", { id: resource.id, version: version.version }));
        if (shown) detail.replaceChildren(h("div", { class: "card" }, h("h3", {}, `Version ${version.version}`), resourceDetails(shown.resource)));
      })))))
    : empty("No kept versions."));
  const detail = h("div", { id: "version-detail" });
  panel.append(detail);
}

// ---- The audit log --------------------------------------------------------------------------

async function showAudit(panel, resource_id) {
  const rows = h("tbody");
  const slot = h("div");
  const more = button("More", () => next(), { hidden: true });
  let page_token = "";
  panel.replaceChildren(h("h2", {}, resource_id ? "Audit log of this resource" : "Audit log"),
    h("p", { class: "muted" }, "Every save, secure read, delete and key rotation, newest first. Admins only."),
    slot, h("table", {}, h("thead", {}, h("tr", {}, ["When", "Actor", "Action", "Resource", "Version", "Outcome", "Detail"].map((t) => h("th", {}, t)))), rows), more);
  const next = async () => {
    more.disabled = true;
    const response = await guarded(slot, () => call("resource", "ListAuditEvents", { resource_id, page_size: 50, page_token }));
    if (!response) {
      rows.closest("table").hidden = true;
      return;
    }
    rows.append(...(response.events || []).map((event) => h("tr", { class: "audit-event", "data-action": event.action },
      h("td", { class: "nowrap" }, when(event.time)), h("td", {}, event.actor, event.agent_id ? h("div", { class: "muted" }, `agent ${event.agent_id}`) : null),
      h("td", {}, event.action), h("td", {}, event.resource_id ? link(resourceHash(event.resource_id), event.resource_id) : ""),
      h("td", {}, event.version || ""), h("td", {}, badge(event.outcome.split(":")[0], event.outcome === "ok" ? "ok" : event.outcome === "attempt" ? "pending" : "failed"),
        event.outcome.includes(":") ? ` ${event.outcome.split(":").slice(1).join(":")}` : ""),
      h("td", {}, event.detail || ""))));
    page_token = response.next_page_token || "";
    more.disabled = !page_token;
    more.hidden = !page_token;
    if (!rows.children.length) slot.replaceChildren(empty("No audit events."));
  };
  await next();
}
