// Traces: the list, and one trace in seed 004's debug UI tabs (timeline, decision tree,
// plan, tools, memory, raw events) built from cognition GetTraceView and GetLog.

import { call, callAll } from "../api.js";
import {
  badge, button, empty, fields, guarded, h, json, link, list, loading, num, pre, section, table,
  when,
} from "../dom.js";

const TABS = {
  timeline: ["Timeline", timelineTab],
  tree: ["Decision tree", treeTab],
  plan: ["Plan", planTab],
  tools: ["Tools", toolsTab],
  memory: ["Memory", memoryTab],
  events: ["Events", eventsTab],
};

// Event.body's names: the JSON key holding the body, and the type name GetLog filters by.
const EVENT_TYPES = {
  query: "query", evaluation: "evaluation", extractionPending: "extraction_pending",
  extractionReviewed: "extraction_reviewed", extractionCommitted: "extraction_committed",
  reflection: "reflection", memoryRead: "memory_read", memoryWrite: "memory_write",
  planEvolution: "plan_evolution", message: "message",
};

export async function render(view, args) {
  if (args.length) await renderTrace(view, args[0], TABS[args[1]] ? args[1] : "timeline");
  else await renderList(view);
}

const traceHash = (traceId, tab) => `#/trace/${encodeURIComponent(traceId)}${tab ? `/${tab}` : ""}`;

async function renderList(view) {
  const id = h("input", { id: "trace-id", placeholder: "trace id", size: 30 });
  const form = h("form", { class: "row" }, id, h("button", { type: "submit" }, "Open"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (id.value.trim()) location.hash = traceHash(id.value.trim());
  });
  const slot = h("div", { id: "trace-list" }, loading());
  view.append(h("h1", {}, "Traces"), form, slot);
  const traces = await guarded(slot, () => callAll("cognition", "ListTraces", { pageSize: 100 }, "traces", 5));
  if (!traces) return;
  slot.append(traces.length ? table(
    ["Trace", "Task", "Agent", "Owner", "Events", "Pending evaluations", "Updated"],
    traces.map((trace) => h("tr", { class: "trace-row", "data-trace-id": trace.traceId },
      h("td", {}, link(traceHash(trace.traceId), trace.traceId)), h("td", {}, trace.task || ""),
      h("td", {}, trace.agentId || ""), h("td", {}, trace.owner || ""), h("td", {}, num(trace.eventCount)),
      h("td", {}, trace.pendingEvaluations || 0), h("td", {}, when(trace.updatedAt)))))
    : empty("No traces visible to this token."));
}

async function renderTrace(view, traceId, tab) {
  view.append(h("p", {}, link("#/trace", "← all traces")));
  const slot = h("div");
  view.append(slot);
  const data = await guarded(slot, () => call("cognition", "GetTraceView", { traceId }));
  if (!data) return;
  const trace = data.trace || {};
  view.append(
    h("h1", {}, "Trace ", h("span", { class: "trace-id" }, trace.traceId || traceId)),
    section("Trace", fields([
      ["Task", trace.task || ""],
      ["Agent", trace.agentId || ""],
      ["Owner", trace.owner || ""],
      ["Events", num(trace.eventCount)],
      ["Last sequence", num(trace.lastSequence)],
      ["Reflected up to", num(trace.reflectedAtSequence)],
      ["Pending evaluations", `${trace.pendingEvaluations || 0}${trace.lastTrigger ? ` (last trigger ${trace.lastTrigger})` : ""}`],
      ["Unconsumed reflections", trace.unconsumedReflections || 0],
      ["Auto commit", trace.autoCommit ? "on" : "off"],
      ["Updated", when(trace.updatedAt)],
    ])),
    h("nav", { class: "tabs" }, Object.entries(TABS).map(([name, [title]]) =>
      h("a", { href: traceHash(traceId, name), class: name === tab ? "active" : "", "data-tab": name }, title))));
  const body = h("div", { class: `tab tab-${tab}`, "data-tab": tab });
  view.append(body);
  await TABS[tab][1](body, data, traceId);
}

export function eventType(event) {
  const key = Object.keys(EVENT_TYPES).find((name) => event[name]);
  return key ? { key, type: EVENT_TYPES[key], body: event[key] } : { key: "", type: "unknown", body: {} };
}

function clip(text, size = 240) {
  const value = text || "";
  return value.length > size ? `${value.slice(0, size)}…` : value;
}

// One line saying what an event is.
function describe(event) {
  const { type, body } = eventType(event);
  switch (type) {
    case "message": return [badge(body.role || "message", "message"), " ", clip(body.content)];
    case "query": return [`asked “${clip(body.query, 160)}” → `, list(body.sourceIds)];
    case "evaluation": return [`${body.knowledgeId}: `, badge((body.evalResult || {}).status || "?"),
      ` ${clip((body.evalResult || {}).reason, 160)}`, body.evaluatedAtTrigger ? ` (at ${body.evaluatedAtTrigger})` : ""];
    case "extraction_pending": return [`${body.extractionId}: “${clip((body.payload || {}).task, 160)}”`];
    case "extraction_reviewed": return [`${body.extractionId}: `, badge(body.decision || "?")];
    case "extraction_committed": return [`${body.extractionId} → `, link(`#/knowledge/${encodeURIComponent(body.knowledgeId)}`, body.knowledgeId)];
    case "reflection": return [`messages ${(body.sequenceRange || []).join("–")}: ${clip(body.summary)}`,
      body.consumedAt ? ` (consumed ${when(body.consumedAt)})` : " (not consumed yet)"];
    case "memory_read": case "memory_write": return [badge(body.memoryType || "?", "memory"),
      ` ${body.keyOrScope || ""} ${clip(body.summary, 160)}`, body.stepIndex ? ` (step ${body.stepIndex})` : ""];
    case "plan_evolution": return [`plan v${body.planVersion || 0}: ${clip(body.diffSummary)}`];
    default: return ["unknown event"];
  }
}

function eventLine(event) {
  return h("div", { class: `event event-${eventType(event).type}` },
    h("span", { class: "kind" }, eventType(event).type), describe(event),
    h("span", { class: "muted" }, ` · ${when(event.timestamp)}`));
}

// ---- Tabs --------------------------------------------------------------------------

function timelineTab(body, data) {
  const steps = data.timeline || [];
  body.append(steps.length
    ? steps.map((step) => h("div", { class: "step", "data-sequence": num(step.sequence) },
      h("h3", {}, `Step ${num(step.sequence)}`), (step.events || []).map(eventLine)))
    : empty("No events with a message sequence yet."));
}

// The choices the trace made, as a collapsible tree: each step's queries branch into the
// knowledge they returned, ending in how it was rated; each extraction into its review
// and commit.
function treeTab(body, data) {
  const node = (summary, children, open = true) =>
    h("details", { class: "node", open }, h("summary", {}, summary), children);
  const leaf = (...content) => h("div", { class: "leaf" }, content);
  const steps = (data.timeline || []).map((step) => {
    const events = step.events || [];
    const ratings = new Map();
    const reviews = new Map();
    for (const event of events) {
      const { type, body: item } = eventType(event);
      if (type === "evaluation") ratings.set(`${num(item.querySequence)}|${item.knowledgeId}`, item);
      if (type === "extraction_reviewed" || type === "extraction_committed") {
        if (!reviews.has(item.extractionId)) reviews.set(item.extractionId, []);
        reviews.get(item.extractionId).push(event);
      }
    }
    const children = events.map((event) => {
      const { type, body: item } = eventType(event);
      if (type === "query") {
        return node(["query: “", clip(item.query, 120), "”"], (item.sourceIds || []).map((id) => {
          const rating = ratings.get(`${num(item.sequence)}|${id}`);
          const status = rating ? (rating.evalResult || {}).status : "not evaluated";
          return leaf(link(`#/knowledge/${encodeURIComponent(id)}`, id), " → ", badge(status || "?", status === "not evaluated" ? "pending" : status),
            rating && rating.evalResult && rating.evalResult.reason ? ` ${clip(rating.evalResult.reason, 120)}` : "");
        }));
      }
      if (type === "extraction_pending") {
        return node(["extraction ", item.extractionId, ": “", clip((item.payload || {}).task, 100), "”"],
          (reviews.get(item.extractionId) || []).map((later) => leaf(describe(later))), true);
      }
      if (["evaluation", "extraction_reviewed", "extraction_committed"].includes(type)) return null;
      return leaf(h("span", { class: "kind" }, type), " ", describe(event));
    });
    return node(`Step ${num(step.sequence)}`, children);
  });
  body.append(h("div", { class: "tree" },
    node(["Trace: ", (data.trace || {}).task || (data.trace || {}).traceId], steps.length ? steps : leaf("no steps yet"))));
}

function planTab(body, data) {
  const plans = data.planEvolution || [];
  body.append(plans.length
    ? table(["Version", "What changed", "When"], plans.map((event) => {
      const plan = event.planEvolution || {};
      return h("tr", { class: "plan-row" }, h("td", {}, `v${num(plan.planVersion)}`),
        h("td", {}, pre(plan.diffSummary)), h("td", {}, when(event.timestamp)));
    }))
    : empty("No plan_evolution events in this trace."));
}

// KnowHub's agent tools are knowledge search (query events) and knowledge_save_pending
// (extractions): which records the trace used and how they rated, and what it extracted.
function toolsTab(body, data) {
  const knowledge = data.knowledge || [];
  const funnel = data.extractionFunnel || {};
  const toolMessages = (data.timeline || []).flatMap((step) => step.events || [])
    .filter((event) => event.message && event.message.role === "tool");
  body.append(
    section("Knowledge search results and their evaluations", knowledge.length
      ? table(["Knowledge", "Queried", "Helpful", "Harmful", "Neutral", "Unused", "Irrelevant", "Feedback deferred"],
        knowledge.map((item) => h("tr", { class: "knowledge-use" },
          h("td", {}, link(`#/knowledge/${encodeURIComponent(item.knowledgeId)}`, item.knowledgeId)),
          [item.queried, item.helpful, item.harmful, item.neutral, item.unused, item.irrelevant,
            item.feedbackDeferred].map((count) => h("td", {}, count || 0)))))
      : empty("The trace used no knowledge."),
    (data.pendingQuerySequences || []).length
      ? h("p", {}, "Queries waiting for evaluation: ", data.pendingQuerySequences.map(num).join(", ")) : null),
    section("Extractions (knowledge_save_pending)", fields(
      ["saved", "reviewed", "pending", "approved", "edited", "discarded", "committed"].map((name) =>
        [name, funnel[name] || 0]))),
    section("Tool messages", toolMessages.length ? toolMessages.map(eventLine) : empty("No tool messages.")));
}

function memoryTab(body, data) {
  const counts = data.memoryCounts || [];
  const events = data.memoryTimeline || [];
  const filter = h("select", { id: "memory-filter" }, h("option", { value: "" }, "every memory type"),
    counts.map((count) => h("option", { value: count.memoryType }, count.memoryType)));
  const timeline = h("div", { class: "memory-timeline" });
  const show = () => timeline.replaceChildren(...events.filter((event) =>
    !filter.value || eventType(event).body.memoryType === filter.value).map(eventLine));
  filter.addEventListener("change", show);
  show();
  body.append(
    section("Reads and writes", counts.length
      ? table(["Memory type", "Reads", "Writes"], counts.map((count) =>
        h("tr", {}, h("td", {}, count.memoryType), h("td", {}, count.reads || 0), h("td", {}, count.writes || 0))))
      : empty("No memory_read or memory_write events."),
    h("div", { class: "row" }, "Show", filter), timeline),
    section("Reflections", (data.reflections || []).length ? data.reflections.map(eventLine) : empty("No reflections yet.")));
}

async function eventsTab(body, data, traceId) {
  const type = h("select", { id: "event-type" }, h("option", { value: "" }, "every type"),
    Object.values(EVENT_TYPES).map((name) => h("option", { value: name }, name)));
  const rows = h("div", { class: "raw-events" });
  const more = button("More", () => next());
  const slot = h("div");
  const download = h("span");
  let pageToken = "";
  const next = async () => {
    const response = await guarded(slot, () => call("cognition", "GetLog",
      { traceId, types: type.value ? [type.value] : [], pageSize: 100, pageToken }));
    if (!response) return;
    rows.append(...(response.events || []).map((event) => h("details", { class: "raw-event" },
      h("summary", {}, h("span", { class: "kind" }, event.eventId), describe(event)), json(event))));
    pageToken = response.nextPageToken || "";
    more.hidden = !pageToken;
  };
  type.addEventListener("change", () => { rows.replaceChildren(); pageToken = ""; next(); });
  const exportLog = button("Export log (JSON)", async () => {
    const response = await guarded(download, () => call("cognition", "ExportLog", { traceId }));
    if (!response) return;
    const url = URL.createObjectURL(new Blob([response.document], { type: "application/json" }));
    download.replaceChildren(h("a", { href: url, download: `${traceId}.json` }, `download ${traceId}.json`));
  });
  body.append(h("div", { class: "row" }, "Show", type, exportLog, download), slot, rows, more);
  await next();
  if (!rows.children.length) rows.append(empty("No events."));
}
