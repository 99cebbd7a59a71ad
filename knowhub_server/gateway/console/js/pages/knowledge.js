// Knowledge: search and browse, an Ask box (the LLM's answer citing the hits), and a form
// to save a new record; one record with its eval history (helpful / harmful cases over
// time), the versions edits, evolve and slim replaced (who, when, which fields, why), a
// score, evolve and field edit form, Delete with Undo, and its linked resources (secure bodies only on an explicit reveal, which the server authorizes).
// The knowledge types come from the gateway.

import { call, hubFacts } from "../api.js";
import { resourceDetails } from "../resources-shared.js";
import {
  badge, button, empty, fields, guarded, h, link, list, loading, pre, section, table, tags, when,
} from "../dom.js";

export async function render(view, args) {
  if (args.length) await renderRecord(view, args[0]);
  else await renderBrowser(view);
}

// ---- Search and list -----------------------------------------------------------------

async function renderBrowser(view) {
  const facts = await hubFacts();
  const knownTypes = facts.knowledge_types || [];
  const query = h("input", { id: "knowledge-query", type: "search", placeholder: "search knowledge", size: 40 });
  const type = h("select", { id: "knowledge-type" }, h("option", { value: "" }, "any type"),
    knownTypes.map((name) => h("option", { value: name }, name)));
  const min_score = h("select", { id: "knowledge-min-score", title: "search: leave out records scored below" },
    [1, 2, 3, 4, 5].map((n) => h("option", { value: n }, `min score ${n}`)));
  const order = h("select", { id: "knowledge-order" },
    h("option", { value: "KNOWLEDGE_ORDER_UNSPECIFIED" }, "recently updated"),
    h("option", { value: "KNOWLEDGE_ORDER_CONFIDENCE" }, "confidence"));
  const results = h("div", { id: "knowledge-results" });
  const form = h("form", { class: "row" }, query, h("button", { type: "submit", class: "primary" }, "Search"),
    type, min_score, order, button("List all", () => { query.value = ""; browse(); }));
  const types = () => (type.value ? [type.value] : []);
  const browse = () => (query.value.trim()
    ? search(results, { query: query.value.trim(), top_k: 50, min_score: Number(min_score.value), types: types() })
    : listPages(results, { page_size: 25, types: types(), order_by: order.value }));
  form.addEventListener("submit", (event) => { event.preventDefault(); browse(); });
  for (const control of [type, order]) control.addEventListener("change", browse);
  view.append(h("h1", {}, "Knowledge"), askBox(facts.configuration), createForm(knownTypes), form, results);
  await browse();
}

// ---- Ask and create ---------------------------------------------------------------------

// Ask needs the hub's model; without one the box says so rather than fail on use.
function askBox(configuration) {
  if (configuration && configuration.model_configured === false) {
    return section("Ask", h("p", { class: "muted", id: "ask-off" },
      "Ask needs a model: set KNOWHUB_LLM_BASE_URL (see the local models guide) and restart the hub."));
  }
  const question = h("input", { id: "ask-query", type: "search", size: 60, placeholder: "ask a question: the answer cites the knowledge it used" });
  const answer = h("div", { id: "ask-answer" });
  const form = h("form", { class: "row" }, question, h("button", { type: "submit" }, "Ask"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!question.value.trim()) return;
    answer.replaceChildren(loading("Asking…"));
    const response = await guarded(answer, () => call("knowledge", "AskKnowledge", { query: question.value.trim() }));
    if (!response) return;
    const hits = response.hits || [];
    answer.append(h("div", { class: "card answer" }, pre(response.answer || "(no answer)", { class: "answer-text" }),
      h("div", { class: "muted" }, "Cited: ", (response.cited_ids || []).length
        ? response.cited_ids.map((id) => [link(`#/knowledge/${encodeURIComponent(id)}`, (hits.find((hit) => hit.knowledge.id === id) || { knowledge: { task: id } }).knowledge.task || id), " "])
        : "nothing")));
  });
  return section("Ask", form, answer);
}

function createForm(knownTypes) {
  const task = h("input", { name: "task", required: true, placeholder: "the task this knowledge helps with" });
  const content = h("textarea", { name: "content", required: true, placeholder: "what to know or do" });
  const boxes = knownTypes.map((name) => h("label", { class: "check" }, h("input", { type: "checkbox", name: "types", value: name }), ` ${name}`));
  const score = h("select", { name: "score" }, [1, 2, 3, 4, 5].map((n) => h("option", { value: n, selected: n === 3 }, `score ${n}`)));
  const slot = h("div");
  const form = h("form", { class: "edit", id: "create-knowledge" },
    h("label", {}, "Task"), task, h("label", {}, "Content"), content,
    h("label", {}, "Types"), h("div", { class: "row" }, boxes), h("label", {}, "Score"), score, slot,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save knowledge")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = boxes.map((label) => label.querySelector("input")).filter((box) => box.checked).map((box) => box.value);
    const saved = await guarded(slot, () => call("knowledge", "SaveKnowledge",
      { task: task.value.trim(), content: content.value, types: chosen, score: Number(score.value) }));
    if (saved) location.hash = `#/knowledge/${encodeURIComponent(saved.knowledge.id)}`;
  });
  return h("details", { class: "panel", id: "new-knowledge" }, h("summary", {}, h("strong", {}, "New knowledge")), form);
}

function recordRow(record, extra = []) {
  const evaluation = record.eval || {};
  return h("tr", { class: "knowledge-row", "data-knowledge-id": record.id },
    h("td", {}, link(`#/knowledge/${encodeURIComponent(record.id)}`, record.task || record.id),
      h("div", { class: "muted" }, record.id)),
    h("td", {}, list(record.types)),
    h("td", {}, evaluation.score ?? 0),
    h("td", {}, `${evaluation.helpful ?? 0} / ${evaluation.harmful ?? 0}`),
    h("td", {}, (evaluation.confidence ?? 0).toFixed(2)),
    extra.map((cell) => h("td", {}, cell)),
    h("td", {}, when(record.updated_at)));
}

const RECORD_HEADERS = ["Task", "Types", "Score", "Helpful / harmful", "Confidence"];

async function search(results, body) {
  results.replaceChildren(loading());
  const response = await guarded(results, () => call("knowledge", "SearchKnowledge", body));
  if (!response) return;
  const hits = response.hits || [];
  const chosen = { SELECTION_ROUTED: ", routed by the LLM", SELECTION_DEGRADED: ", from BM25 alone (the embedding model is failing)" };
  results.append(h("p", { class: "muted" }, `${hits.length} hit(s)${chosen[response.selection] || ""}`),
    hits.length ? table([...RECORD_HEADERS, "Quality", "Relevance", "Updated"],
      hits.map((hit) => recordRow(hit.knowledge, [(hit.quality_score ?? 0).toFixed(2), (hit.relevance ?? 0).toFixed(3)])))
      : empty("Nothing matches."));
}

async function listPages(results, body) {
  results.replaceChildren(loading());
  const rows = h("tbody");
  const more = button("More", () => next());
  let page_token = "";
  const next = async () => {
    more.disabled = true;
    const slot = h("div");
    results.append(slot);
    const response = await guarded(slot, () => call("knowledge", "ListKnowledge", { ...body, page_token }));
    if (!response) return;
    rows.append(...(response.knowledge || []).map((record) => recordRow(record)));
    page_token = response.next_page_token || "";
    more.disabled = !page_token;
    more.hidden = !page_token;
  };
  results.replaceChildren(h("table", {},
    h("thead", {}, h("tr", {}, [...RECORD_HEADERS, "Updated"].map((title) => h("th", {}, title)))), rows), more);
  await next();
  if (!rows.children.length && !results.querySelector(".error")) {
    results.prepend(empty("No knowledge visible to this token yet: save some below, or let agents save it."));
  }
}

// ---- One record ----------------------------------------------------------------------

async function renderRecord(view, id) {
  view.append(h("p", {}, link("#/knowledge", "← all knowledge")));
  const slot = h("div");
  view.append(slot);
  const response = await guarded(slot, () => call("knowledge", "GetKnowledge", { id }));
  if (!response) return;
  const record = response.knowledge;
  const evaluation = record.eval || {};
  const source = record.source || {};
  view.append(
    h("h1", { class: "record-task" }, record.task),
    section("Record",
      pre(record.content, { class: "record-content" }),
      fields([
        ["Id", record.id],
        ["Types", list(record.types)],
        ["Tags", tags(record.tags)],
        ["Scopes", list(record.scopes)],
        ["Owner", record.owner],
        ["Source", [source.category, source.name, source.agent_id && `agent ${source.agent_id}`,
          source.submitted_by && `by ${source.submitted_by}`].filter(Boolean).join(" · ")],
        ["URLs", list(source.urls)],
        ["Message", record.message_id || ""],
        ["Created", when(record.created_at)],
        ["Updated", when(record.updated_at)],
      ])),
    editSection(record, (await hubFacts()).knowledge_types || [], view),
    evalSection(evaluation),
    await versionsSection(record),
    resourcesSection(record.resource_ids || []));
}

function evalSection(evaluation) {
  const cases = [
    ...(evaluation.helpful_history || []).map((item) => ({ ...item, kind: "helpful" })),
    ...(evaluation.harmful_history || []).map((item) => ({ ...item, kind: "harmful" })),
  ].sort((a, b) => String(a.timestamp || "").localeCompare(String(b.timestamp || "")));
  return h("section", { class: "panel", id: "eval-history" },
    h("h2", {}, "Eval history"),
    fields([
      ["Score", evaluation.score ?? 0],
      ["Helpful", evaluation.helpful ?? 0],
      ["Harmful", evaluation.harmful ?? 0],
      ["Confidence", (evaluation.confidence ?? 0).toFixed(3)],
    ]),
    cases.length ? [casesChart(cases), table(["When", "Case", "Task", "Outcome", "Reason", "Trace"],
      cases.map((item) => h("tr", { class: `case case-${item.kind}` },
        h("td", {}, when(item.timestamp)), h("td", {}, badge(item.kind)),
        h("td", {}, item.task || ""), h("td", {}, item.outcome || ""), h("td", {}, item.reason || ""),
        h("td", {}, item.trace_id
          ? [link(`#/trace/${encodeURIComponent(item.trace_id)}`, item.trace_id),
            item.query_sequence ? ` (query ${item.query_sequence})` : ""]
          : "")))),
    h("p", { class: "muted" }, "The counters count every case; the record keeps the most recent 100 of each kind.")]
      : h("p", { class: "muted" }, "No helpful or harmful cases recorded yet."));
}

// Cumulative helpful and harmful cases over time, as two step lines.
function casesChart(cases) {
  const SVG = "http://www.w3.org/2000/svg";
  const width = 600, height = 150, pad = 24;
  const times = cases.map((item, index) => Date.parse(item.timestamp) || index);
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  const x = (t) => pad + (t1 === t0 ? (width - 2 * pad) / 2 : ((t - t0) / (t1 - t0)) * (width - 2 * pad));
  const counts = { helpful: 0, harmful: 0 };
  const points = { helpful: [[pad, height - pad]], harmful: [[pad, height - pad]] };
  const peak = Math.max(1, ...["helpful", "harmful"].map((kind) => cases.filter((c) => c.kind === kind).length));
  const y = (n) => height - pad - (n / peak) * (height - 2 * pad);
  cases.forEach((item, index) => {
    const px = x(times[index]);
    const previous = points[item.kind][points[item.kind].length - 1];
    counts[item.kind] += 1;
    points[item.kind].push([px, previous[1]], [px, y(counts[item.kind])]);
  });
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `cumulative cases: ${counts.helpful} helpful, ${counts.harmful} harmful`);
  const add = (tag, attrs, text) => {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (text) node.textContent = text;
    svg.append(node);
  };
  add("line", { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, stroke: "#b9c1ce" });
  for (const [kind, color] of [["helpful", "#1f7a3d"], ["harmful", "#b3261e"]]) {
    const line = points[kind];
    line.push([width - pad, line[line.length - 1][1]]);
    add("polyline", { points: line.map((p) => p.join(",")).join(" "), fill: "none", stroke: color, "stroke-width": 2 });
  }
  add("text", { x: pad, y: 14, "font-size": 12, fill: "#1f7a3d" }, `helpful ${counts.helpful}`);
  add("text", { x: pad + 90, y: 14, "font-size": 12, fill: "#b3261e" }, `harmful ${counts.harmful}`);
  return svg;
}

// The record's earlier states, newest first: who replaced each, when, which fields and why.
async function versionsSection(record) {
  const panel = h("section", { class: "panel", id: "versions" }, h("h2", {}, "Versions"));
  const slot = h("div");
  panel.append(slot);
  const response = await guarded(slot, () => call("knowledge", "ListKnowledgeVersions", { id: record.id }));
  if (response) {
    const versions = response.versions || [];
    panel.append(h("div", { class: "version-list" }, versions.length
      ? versions.map((version, index) => versionCard(version, versions.length - index))
      : h("p", { class: "muted" }, "No earlier versions: edits, evolve and slim keep the state they replace here.")));
  }
  return panel;
}

function versionCard(version, number) {
  const changed = version.changed_fields || [];
  return h("div", { class: "card version", "data-reason": version.reason || "" },
    h("div", { class: "row" }, h("strong", {}, `Version ${number}`), badge(version.reason || "replaced"),
      h("span", { class: "muted version-who" }, `replaced ${when(version.replaced_at)}`,
        version.changed_by ? ` by ${version.changed_by}` : "")),
    fields([
      ["Changed", h("span", { class: "version-fields" }, list(changed))],
      ["Why", h("span", { class: "version-why" }, version.feedback || "")],
    ]),
    pre(version.content, { class: "version-content" }),
    version.task ? h("details", { class: "version-state" }, h("summary", {}, "Its other fields as they were"),
      fields([
        ["Task", version.task],
        ["Types", list(version.types)],
        ["Tags", tags(version.tags)],
        ["Scopes", list(version.scopes)],
        ["Resources", list(version.resource_ids)],
      ])) : null);
}

const reload = () => window.dispatchEvent(new HashChangeEvent("hashchange"));

// The record's score, evolve (the LLM rewrites the content from feedback), a field-mask
// edit, and Delete with its Undo.
function editSection(record, knownTypes, view) {
  const score = h("select", { name: "score" }, [1, 2, 3, 4, 5].map((n) =>
    h("option", { value: n, selected: n === ((record.eval || {}).score ?? 0) }, `score ${n}`)));
  const scoreSlot = h("div");
  const scoreForm = h("form", { class: "row", id: "score-form" }, h("strong", {}, "Score"), score, h("button", { type: "submit" }, "Set score"), scoreSlot);
  scoreForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (await guarded(scoreSlot, () => call("knowledge", "UpdateKnowledge", { id: record.id, update_score: Number(score.value) }))) reload();
  });
  const feedback = h("input", { name: "feedback", size: 60, placeholder: "what to change (the LLM rewrites the content)" });
  const evolveSlot = h("div");
  const evolve = h("form", { class: "row", id: "evolve-form" }, h("strong", {}, "Evolve"), feedback, h("button", { type: "submit" }, "Evolve"), evolveSlot);
  evolve.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (await guarded(evolveSlot, () => call("knowledge", "UpdateKnowledge", { id: record.id, evolve_feedback: feedback.value }))) reload();
  });
  const deleteSlot = h("div");
  const remove = button("Delete", async (event) => {
    if (event.target.dataset.confirm !== "1") {
      event.target.dataset.confirm = "1";
      event.target.textContent = "Delete: click again to confirm";
      return;
    }
    const deleted = await guarded(deleteSlot, () => call("knowledge", "DeleteKnowledge", { id: record.id }));
    if (deleted) view.replaceChildren(deletedNotice(record, deleted.purge_time));
  }, { class: "danger delete-knowledge" });
  return h("section", { class: "panel", id: "edit" }, h("h2", {}, "Edit"), scoreForm, evolve,
    fieldsForm(record, knownTypes), h("div", { class: "row" }, remove, deleteSlot));
}

// What a deleted record's page shows: until its purge time, Undo brings it back.
function deletedNotice(record, purgeTime) {
  const slot = h("div");
  const undo = button("Undo delete", async () => {
    if (await guarded(slot, () => call("knowledge", "UndeleteKnowledge", { id: record.id }))) reload();
  }, { class: "primary undelete-knowledge" });
  return h("div", { id: "knowledge-deleted" }, h("p", {}, link("#/knowledge", "← all knowledge")),
    h("div", { class: "notice" }, h("strong", {}, "Deleted: "), record.task,
      h("p", { class: "purge-time" }, `It can be restored until ${when(purgeTime)}; then it is purged for good.`),
      h("div", { class: "row" }, undo)), slot);
}

const lines = (text) => text.split("\n").map((line) => line.trim()).filter(Boolean);
const commaList = (text) => text.split(",").map((item) => item.trim()).filter(Boolean);
const tagsText = (map) => Object.entries(map || {}).map(([key, value]) => `${key}: ${value}`).join("\n");

function parseTags(text) {
  const map = {};
  for (const line of lines(text)) {
    const split = line.indexOf(":");
    if (split < 0) map[line] = "";
    else map[line.slice(0, split).trim()] = line.slice(split + 1).trim();
  }
  return map;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const sortedTags = (map) => Object.fromEntries(Object.entries(map || {}).sort(([a], [b]) => a.localeCompare(b)));
// Field mask paths go in proto3 JSON's lowerCamelCase.
const maskPath = (field) => field.replace(/_([a-z])/g, (_, letter) => letter.toUpperCase());

// Edits task, content, tags, types, scopes and resource links: only the fields changed
// go in the update mask, with the change note kept on the version.
function fieldsForm(record, knownTypes) {
  const task = h("input", { name: "task", value: record.task || "" });
  const content = h("textarea", { name: "content", value: record.content || "" });
  const tagsBox = h("textarea", { name: "tags", rows: 3, class: "short", value: tagsText(record.tags),
    placeholder: "one tag a line: key: value" });
  const types = [...new Set([...knownTypes, ...(record.types || [])])];
  const boxes = types.map((name) => h("label", { class: "check" },
    h("input", { type: "checkbox", name: "types", value: name, checked: (record.types || []).includes(name) }), ` ${name}`));
  const scopes = h("input", { name: "scopes", value: (record.scopes || []).join(", "), placeholder: "e.g. org:acme, user:alice" });
  const resources = h("input", { name: "resource_ids", value: (record.resource_ids || []).join(", "), placeholder: "resource ids, comma-separated" });
  const note = h("input", { name: "change_note", placeholder: "why (kept with the version)" });
  const slot = h("div");
  const form = h("form", { class: "edit", id: "edit-knowledge" },
    h("label", {}, "Task"), task, h("label", {}, "Content"), content, h("label", {}, "Tags"), tagsBox,
    h("label", {}, "Types"), h("div", { class: "row" }, boxes), h("label", {}, "Scopes"), scopes,
    h("label", {}, "Resource links"), resources, h("label", {}, "Change note"), note, slot,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save changes")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const edited = {
      task: task.value.trim(),
      content: content.value,
      tags: sortedTags(parseTags(tagsBox.value)),
      types: boxes.map((label) => label.querySelector("input")).filter((box) => box.checked).map((box) => box.value),
      scopes: commaList(scopes.value),
      resource_ids: commaList(resources.value),
    };
    const before = { ...record, tags: sortedTags(record.tags), types: record.types || [], scopes: record.scopes || [],
      resource_ids: record.resource_ids || [] };
    const changed = Object.keys(edited).filter((field) => !same(edited[field], before[field]));
    if (!changed.length) {
      slot.replaceChildren(h("p", { class: "notice" }, "Nothing changed."));
      return;
    }
    const knowledge = Object.fromEntries([["id", record.id], ...changed.map((field) => [field, edited[field]])]);
    const body = { id: record.id, knowledge, update_mask: changed.map(maskPath).join(","), change_note: note.value.trim() };
    if (await guarded(slot, () => call("knowledge", "UpdateKnowledge", body))) reload();
  });
  return h("details", { class: "card", id: "edit-fields" }, h("summary", {}, h("strong", {}, "Edit fields")), form);
}

function resourcesSection(ids) {
  return h("section", { class: "panel", id: "resources" }, h("h2", {}, "Linked resources"),
    ids.length ? ids.map(resourceCard) : h("p", { class: "muted" }, "No linked resources."));
}

function resourceCard(id) {
  const card = h("div", { class: "card resource", "data-resource-id": id }, loading(`Loading ${id}…`));
  guarded(card, () => call("resource", "GetResource", { id })).then((response) => {
    if (response) card.replaceChildren(h("div", {}, resourceDetails(response.resource)));
  });
  return card;
}

