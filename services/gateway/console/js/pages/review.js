// Review queue (seed 000): extractions across every trace the token can see; approve,
// edit or discard each, then commit a trace's approved ones and read the commit report.

import { call, callAll } from "../api.js";
import {
  badge, button, empty, fields, guarded, h, link, list, loading, pre, section, table,
  tags, when,
} from "../dom.js";

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
  const reload = () => showExtractions(listing, report, filter.value);
  filter.addEventListener("change", reload);
  view.append(
    h("h1", {}, "Review queue"),
    h("div", { class: "row" }, h("label", { for: "review-filter" }, "Show"), filter,
      button("Refresh", reload)),
    report, listing);
  await reload();
}

async function showExtractions(listing, report, filter) {
  listing.replaceChildren(loading());
  const extractions = await guarded(listing, () =>
    callAll("cognition", "ListExtractions", { states: FILTERS[filter], pageSize: 100 }, "extractions"));
  if (!extractions) return;
  if (!extractions.length) {
    listing.append(empty("No extractions in this state."));
    return;
  }
  const byTrace = new Map();
  for (const extraction of extractions) {
    if (!byTrace.has(extraction.traceId)) byTrace.set(extraction.traceId, []);
    byTrace.get(extraction.traceId).push(extraction);
  }
  const refresh = () => showExtractions(listing, report, filter);
  for (const [traceId, items] of byTrace) {
    listing.append(traceGroup(traceId, items, report, refresh));
  }
}

function traceGroup(traceId, items, report, refresh) {
  const cards = items.map((extraction) => extractionCard(extraction));
  const commit = button("Commit approved", async () => {
    commit.disabled = true;
    const result = await guarded(report, () => call("cognition", "CommitExtractions", { traceId }));
    if (result) {
      report.replaceChildren(commitReport(traceId, result));
      await refresh();
    } else {
      commit.disabled = false;
    }
  }, { class: "primary commit", "data-trace-id": traceId });
  return h("section", { class: "panel trace-group", "data-trace-id": traceId },
    h("div", { class: "row" },
      h("h2", {}, "Trace ", link(`#/trace/${encodeURIComponent(traceId)}`, traceId)),
      h("span", { class: "muted" }, `${items.length} extraction(s)`), commit),
    cards);
}

function effectivePayload(extraction) {
  return extraction.editedPayload || extraction.payload || {};
}

function extractionCard(extraction) {
  const card = h("div", { class: "card extraction", "data-extraction-id": extraction.extractionId });
  fillCard(card, extraction);
  return card;
}

function fillCard(card, extraction) {
  const payload = effectivePayload(extraction);
  const slot = h("div", { class: "card-error" });
  const review = (decision, editedPayload) => async () => {
    const body = { traceId: extraction.traceId, extractionId: extraction.extractionId, decision };
    if (editedPayload) body.editedPayload = editedPayload;
    const result = await guarded(slot, () => call("cognition", "ReviewExtraction", body));
    if (result) fillCard(card, result.extraction);
  };
  const open = !["committed"].includes(extraction.state);
  card.dataset.state = extraction.state;
  card.replaceChildren(
    h("div", { class: "row" }, badge(extraction.state), h("strong", { class: "task" }, payload.task),
      h("span", { class: "muted" }, extraction.extractionId)),
    pre(payload.content, { class: "content" }),
    fields([
      ["Types", list(payload.types)],
      ["Score", payload.score ?? 3],
      ["Tags", tags(payload.tags)],
      ["Scopes", list(payload.scopes)],
      ["Owner", payload.owner || ""],
      ["Resources", list(payload.resourceIds)],
      ["From", `step ${extraction.sequence || 0}${extraction.goalId ? `, goal ${extraction.goalId}` : ""}${extraction.branchId ? `, branch ${extraction.branchId}` : ""}`],
      ["Saved", when(extraction.createdAt)],
      ["Reviewed", extraction.reviewedAt ? when(extraction.reviewedAt) : undefined],
      ["Edited", extraction.editedPayload ? "yes: the edited payload above will be committed" : undefined],
      ["Knowledge", extraction.knowledgeId ? link(`#/knowledge/${encodeURIComponent(extraction.knowledgeId)}`, extraction.knowledgeId) : undefined],
    ]),
    open ? h("div", { class: "actions" },
      button("Approve", review("approve"), { class: "approve" }),
      button("Edit", () => card.append(editForm(payload, (edited) => review("edit", edited)())), { class: "edit" }),
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

function commitReport(traceId, result) {
  const committed = result.committed || [];
  const failed = result.failed || [];
  return section(`Commit report — ${traceId}`,
    h("p", { class: "summary" }, `${committed.length} committed, ${failed.length} failed`),
    committed.length ? table(["Extraction", "Knowledge"], committed.map((item) =>
      h("tr", { class: "committed" }, h("td", {}, item.extractionId),
        h("td", {}, link(`#/knowledge/${encodeURIComponent(item.knowledgeId)}`, item.knowledgeId)))))
      : null,
    failed.length ? table(["Extraction", "Code", "Message"], failed.map((item) =>
      h("tr", { class: "failed" }, h("td", {}, item.extractionId), h("td", {}, item.code),
        h("td", {}, item.message)))) : null,
    !committed.length && !failed.length
      ? h("p", { class: "notice" }, "No approved or edited extraction was waiting in this trace.") : null);
}
