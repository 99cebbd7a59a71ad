// The landing page: the hub's configuration as the gateway reads it, counts of what the
// token sees (records, traces, pending reviews, failed jobs), recent failures, and links to
// the API's own documentation and the metrics.

import { overview } from "../api.js";
import { empty, errorBox, fields, guarded, h, loading, section, table, when } from "../dom.js";

const COUNTS = [
  ["records", "Knowledge records", "#/knowledge"],
  ["traces", "Traces", "#/trace"],
  ["pending_reviews", "Pending reviews", "#/review"],
  ["failed_jobs", "Failed jobs", "#/dream"],
];

export async function render(view) {
  const slot = h("div", {}, loading());
  view.append(h("h1", {}, "Overview"), slot);
  const data = await guarded(slot, overview);
  if (!data) return;
  slot.append(
    h("div", { class: "count-tiles", id: "counts" }, COUNTS.map(([key, title, hash]) => countTile(data.counts[key], title, hash, key))),
    h("div", { class: "grid2" }, configuration(data.configuration), recentErrors(data.recent_errors)),
    section("Links", h("ul", { class: "links" },
      h("li", {}, h("a", { href: data.links.api_docs, id: "api-docs-link" }, "API documentation (Swagger UI)"),
        " — every route, tried in the browser"),
      h("li", {}, h("a", { href: data.links.openapi }, "OpenAPI document"), " (JSON)"),
      metricsLink(data.configuration))));
}

function countTile(part, title, hash, key) {
  const value = part.error ? h("span", { class: "count-error", title: part.error.message }, part.error.code)
    : `${part.count}${part.more ? "+" : ""}`;
  return h("a", { class: "count panel", href: hash, "data-count": key },
    h("span", { class: "count-value" }, value), h("span", { class: "muted" }, title));
}

function configuration(config) {
  if (!config) {
    return section("Configuration", empty("This gateway runs without the hub's settings (its configuration is not known here)."));
  }
  if (config.error) return section("Configuration", empty("The hub's configuration is shown to admins only."));
  return h("section", { class: "panel", id: "configuration" }, h("h2", {}, "Configuration"),
    fields([
      ["Mode", config.mode],
      ["Model", config.model],
      ["Embeddings", config.embeddings],
      ["Storage", config.storage],
      ["Metrics", config.metrics_port ? `port ${config.metrics_port}` : "off (KNOWHUB_METRICS_PORT unset)"],
    ]),
    h("p", { class: "muted" }, "As the process serving this console reads its settings (environment and configuration file)."));
}

function recentErrors(part) {
  const panel = h("section", { class: "panel", id: "recent-errors" }, h("h2", {}, "Recent failures"));
  if (part.error) panel.append(errorBox(part.error));
  else if (!part.items.length) panel.append(empty("No failed historian jobs or dream runs."));
  else {
    panel.append(table(["When", "What", "Message"], part.items.map((item) => h("tr", {},
      h("td", { class: "nowrap" }, when(item.time)), h("td", {}, `${item.what} `, h("span", { class: "muted" }, item.id)),
      h("td", {}, item.message || "")))));
  }
  return panel;
}

function metricsLink(config) {
  if (!config || !config.metrics_port) return null;  // unknown, hidden or off
  const url = `${location.protocol}//${location.hostname}:${config.metrics_port}/metrics`;
  return h("li", {}, h("a", { href: url }, "Prometheus metrics"), ` (${url})`);
}
