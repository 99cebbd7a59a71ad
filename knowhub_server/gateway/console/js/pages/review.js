// Review queue: extractions across every trace the token can see; approve,
// edit or discard each, then commit a trace's approved ones and read the commit report.
// Above them, the traces whose evaluation an evaluator gave up on.

import { call, callAll } from "../api.js";
import {
  badge, button, empty, fields, guarded, h, link, list, loading, pre, section, table,
  tags, when,
} from "../dom.js";
import { traceHash } from "./trace.js";

const FILTERS = {
  open: ["pending", "approved", "edited"],
  pending: ["pending"],
  approved: ["approved", "edited"],
  discarded: ["discarded"],
  committed: ["committed"],
  all: [],
};
const COMMITTABLE = new Set(["approved", "edited"]);

export async function render(view) {
  const filter = h("select", { id: "review-filter" },
    Object.keys(FILTERS).map((name) => h("option", { value: name }, name)));
  const report = h("div", { id: "commit-report" });
  const listing = h("div", { id: "extractions" });
  const givenUp = h("div", { id: "given-up" });
  const reload = () => Promise.all([showExtractions(listing, report, filter.value), showGivenUp(givenUp)]);
  filter.addEventListener("change", reload);
  view.append(
    h("h1", {}, "Review queue"),
    h("div", { class: "row" }, h("label", { for: "review-filter" }, "Show"), filter,
      button("Refresh", reload)),
    givenUp, report, listing);
  await reload();
}

// The traces with queries an evaluator gave up on: open one to see why and retry.
async function showGivenUp(slot) {
  const traces = await guarded(slot, () => callAll("cognition", "ListTraces", { page_size: 100 }, "traces", 5));
  const stuck = (traces || []).filter((trace) => trace.abandoned_evaluations);
  if (!stuck.length) return;
  slot.append(section("Evaluations the evaluator gave up on", table(
    ["Trace", "Owner", "Given up", "Pending", "Last trigger"],
    stuck.map((trace) => h("tr", { class: "given-up-trace", "data-trace-id": trace.trace_id },
      h("td", {}, link(traceHash(trace.trace_id, { owner: trace.owner }), trace.trace_id)),
      h("td", {}, trace.owner), h("td", {}, badge(`${trace.abandoned_evaluations} queries`, "failed")),
      h("td", {}, trace.pending_evaluations || 0), h("td", {}, trace.last_trigger || "—"))))));
}

async function showExtractions(listing, report, filter) {
  listing.replaceChildren(loading());
  const extractions = await guarded(listing, () =>
    callAll("cognition", "ListExtractions", { states: FILTERS[filter], page_size: 100 }, "extractions"));
  if (!extractions) return;
  if (!extractions.length) {
    listing.append(empty("No extractions in this state."));
    return;
  }
  const byTrace = new Map();  // each owner names their own traces
  for (const extraction of extractions) {
    const key = `${extraction.owner}/${extraction.trace_id}`;
    if (!byTrace.has(key)) byTrace.set(key, []);
    byTrace.get(key).push(extraction);
  }
  const refresh = () => showExtractions(listing, report, filter);
  for (const items of byTrace.values()) {
    listing.append(traceGroup(items[0].trace_id, items[0].owner, items, report, refresh));
  }
}

function traceGroup(trace_id, owner, items, report, refresh) {
  const cards = items.map((extraction) => extractionCard(extraction));
  const commit = button("Commit approved", async () => {
    commit.disabled = true;
    const result = await guarded(report, () => call("cognition", "CommitExtractions", { trace_id, owner }));
    if (result) {
      report.replaceChildren(commitReport(trace_id, result, items));
      await refresh();
    } else {
      commit.disabled = false;
    }
  }, { class: "primary commit", "data-trace-id": trace_id, "data-owner": owner });
  return h("section", { class: "panel trace-group", "data-trace-id": trace_id, "data-owner": owner },
    h("div", { class: "row" },
      h("h2", {}, "Trace ", link(traceHash(trace_id, { owner }), trace_id),
        h("span", { class: "muted" }, ` (${owner})`)),
      h("span", { class: "muted" }, `${items.length} extraction(s)`), commit),
    cards);
}

function effectivePayload(extraction) {
  return extraction.edited_payload || extraction.payload || {};
}

function extractionCard(extraction) {
  const card = h("div", { class: "card extraction", "data-extraction-id": extraction.extraction_id });
  fillCard(card, extraction);
  return card;
}

function fillCard(card, extraction) {
  const payload = effectivePayload(extraction);
  const slot = h("div", { class: "card-error" });
  const review = (decision, edited_payload) => async () => {
    const body = {
      trace_id: extraction.trace_id, owner: extraction.owner, extraction_id: extraction.extraction_id, decision,
    };
    if (edited_payload) body.edited_payload = edited_payload;
    const result = await guarded(slot, () => call("cognition", "ReviewExtraction", body));
    if (result) {
      // The same object stays in the trace's list, so the commit report names the task
      // as it was last reviewed.
      for (const key of Object.keys(extraction)) delete extraction[key];
      fillCard(card, Object.assign(extraction, result.extraction));
    }
  };
  const open = !["committed"].includes(extraction.state);
  card.dataset.state = extraction.state;
  card.replaceChildren(
    h("div", { class: "row" }, badge(extraction.state), h("strong", { class: "task" }, payload.task),
      h("span", { class: "muted" }, extraction.extraction_id)),
    pre(payload.content, { class: "content" }),
    fields([
      ["Types", list(payload.types)],
      ["Score", payload.score ?? 3],
      ["Tags", tags(payload.tags)],
      ["Scopes", list(payload.scopes)],
      ["Owner", payload.owner || ""],
      ["Resources", list(payload.resource_ids)],
      ["From", `step ${extraction.sequence || 0}${extraction.goal_id ? `, goal ${extraction.goal_id}` : ""}${extraction.branch_id ? `, branch ${extraction.branch_id}` : ""}`],
      ["Saved", when(extraction.created_at)],
      ["Reviewed", extraction.reviewed_at ? when(extraction.reviewed_at) : undefined],
      ["Edited", extraction.edited_payload ? "yes: the edited payload above will be committed" : undefined],
      ["Knowledge", extraction.knowledge_id ? link(`#/knowledge/${encodeURIComponent(extraction.knowledge_id)}`, extraction.knowledge_id) : undefined],
    ]),
    open ? h("div", { class: "actions" },
      button("Approve", review("approve"), { class: "approve" }),
      button("Edit", () => card.querySelector("form.edit")
        || card.append(editForm(payload, (edited) => review("edit", edited)())), { class: "edit" }),
      button("Discard", review("discard"), { class: "discard" })) : null,
    slot);
}

function editForm(payload, save) {
  const task = h("input", { name: "task", value: payload.task || "" });
  const content = h("textarea", { name: "content" }, payload.content || "");
  const types = h("input", { name: "types", value: (payload.types || []).join(", ") });
  const score = h("input", { name: "score", type: "number", min: 1, max: 5, value: payload.score ?? 3 });
  const form = h("form", { class: "edit" },
    h("label", {}, "Task"), task,
    h("label", {}, "Content"), content,
    h("label", {}, "Types (comma-separated)"), types,
    h("label", {}, "Score (1-5)"), score,
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Save edit"),
      button("Cancel", () => form.remove())));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    save({
      ...payload,
      task: task.value,
      content: content.value,
      types: types.value.split(",").map((type) => type.trim()).filter(Boolean),
      score: Number(score.value),
    });
  });
  return form;
}

function commitReport(trace_id, result, items) {
  const tasks = new Map(items.map((item) => [item.extraction_id, effectivePayload(item).task]));
  const committed = result.committed || [];
  const failed = result.failed || [];
  return section(`Commit report — ${trace_id}`,
    h("p", { class: "summary" }, `${committed.length} committed, ${failed.length} failed`),
    committed.length ? table(["Extraction", "Knowledge", "Task"], committed.map((item) =>
      h("tr", { class: "committed" }, h("td", {}, item.extraction_id),
        h("td", {}, link(`#/knowledge/${encodeURIComponent(item.knowledge_id)}`, item.knowledge_id)),
        h("td", {}, tasks.get(item.extraction_id) || ""))))
      : null,
    failed.length ? table(["Extraction", "Code", "Message"], failed.map((item) =>
      h("tr", { class: "failed" }, h("td", {}, item.extraction_id), h("td", {}, item.code),
        h("td", {}, item.message)))) : null,
    !committed.length && !failed.length
      ? h("p", { class: "notice" }, "No approved or edited extraction was waiting in this trace.") : null);
}
