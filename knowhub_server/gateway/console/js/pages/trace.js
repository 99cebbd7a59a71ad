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

// Event.body's names: the JSON key holding an event's body, and its type for GetLog.
const EVENT_TYPES = [
  "query", "evaluation", "extraction_pending", "extraction_reviewed", "extraction_committed",
  "reflection", "memory_read", "memory_write", "plan_evolution", "message", "feedback_refused",
];

export async function render(view, args) {
  if (args.length) await renderTrace(view, args[0], TABS[args[1]] ? args[1] : "timeline");
  else await renderList(view);
}

const traceHash = (trace_id, tab) => `#/trace/${encodeURIComponent(trace_id)}${tab ? `/${tab}` : ""}`;

async function renderList(view) {
  const id = h("input", { id: "trace-id", placeholder: "trace id", size: 30 });
  const form = h("form", { class: "row" }, id, h("button", { type: "submit" }, "Open"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (id.value.trim()) location.hash = traceHash(id.value.trim());
  });
  const slot = h("div", { id: "trace-list" }, loading());
  view.append(h("h1", {}, "Traces"), form, slot);
  const traces = await guarded(slot, () => callAll("cognition", "ListTraces", { page_size: 100 }, "traces", 5));
  if (!traces) return;
  slot.append(traces.length ? table(
    ["Trace", "Task", "Agent", "Owner", "Events", "Pending evaluations", "Updated"],
    traces.map((trace) => h("tr", { class: "trace-row", "data-trace-id": trace.trace_id },
      h("td", {}, link(traceHash(trace.trace_id), trace.trace_id)), h("td", {}, trace.task || ""),
      h("td", {}, trace.agent_id || ""), h("td", {}, trace.owner || ""), h("td", {}, num(trace.event_count)),
      h("td", {}, trace.pending_evaluations || 0), h("td", {}, when(trace.updated_at)))))
    : empty("No traces visible to this token."));
}

async function renderTrace(view, trace_id, tab) {
  view.append(h("p", {}, link("#/trace", "← all traces")));
  const slot = h("div");
  view.append(slot);
  const data = await guarded(slot, () => call("cognition", "GetTraceView", { trace_id }));
  if (!data) return;
  const trace = data.trace || {};
  view.append(
    h("h1", {}, "Trace ", h("span", { class: "trace-id" }, trace.trace_id || trace_id)),
    section("Trace", fields([
      ["Task", trace.task || ""],
      ["Agent", trace.agent_id || ""],
      ["Owner", trace.owner || ""],
      ["Events", num(trace.event_count)],
      ["Last sequence", num(trace.last_sequence)],
      ["Reflected up to", num(trace.reflected_at_sequence)],
      ["Pending evaluations", `${trace.pending_evaluations || 0}${trace.last_trigger ? ` (last trigger ${trace.last_trigger})` : ""}`],
      ["Unconsumed reflections", trace.unconsumed_reflections || 0],
      ["Auto commit", trace.auto_commit ? "on" : "off"],
      ["Updated", when(trace.updated_at)],
    ])),
    h("nav", { class: "tabs" }, Object.entries(TABS).map(([name, [title]]) =>
      h("a", { href: traceHash(trace_id, name), class: name === tab ? "active" : "", "data-tab": name }, title))));
  const body = h("div", { class: `tab tab-${tab}`, "data-tab": tab });
  view.append(body);
  await TABS[tab][1](body, data, trace_id);
}

export function eventType(event) {
  const type = EVENT_TYPES.find((name) => event[name]);
  return type ? { type, body: event[type] } : { type: "unknown", body: {} };
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
    case "query": return [`asked “${clip(body.query, 160)}” → `, list(body.source_ids)];
    case "evaluation": return [`${body.knowledge_id}: `, badge((body.eval_result || {}).status || "?"),
      ` ${clip((body.eval_result || {}).reason, 160)}`, body.evaluated_at_trigger ? ` (at ${body.evaluated_at_trigger})` : ""];
    case "extraction_pending": return [`${body.extraction_id}: “${clip((body.payload || {}).task, 160)}”`];
    case "extraction_reviewed": return [`${body.extraction_id}: `, badge(body.decision || "?")];
    case "extraction_committed": return [`${body.extraction_id} → `, link(`#/knowledge/${encodeURIComponent(body.knowledge_id)}`, body.knowledge_id)];
    case "reflection": return [`messages ${(body.sequence_range || []).join("–")}: ${clip(body.summary)}`,
      body.consumed_at ? ` (consumed ${when(body.consumed_at)})` : " (not consumed yet)"];
    case "memory_read": case "memory_write": return [badge(body.memory_type || "?", "memory"),
      ` ${body.key_or_scope || ""} ${clip(body.summary, 160)}`, body.step_index ? ` (step ${body.step_index})` : ""];
    case "plan_evolution": return [`plan v${body.plan_version || 0}: ${clip(body.diff_summary)}`];
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
  body.append(h("div", { class: "timeline" }, steps.length
    ? steps.map((step) => h("div", { class: "step", "data-sequence": num(step.sequence) },
      h("h3", {}, `Step ${num(step.sequence)}`), (step.events || []).map(eventLine)))
    : empty("No events with a message sequence yet.")));
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
      if (type === "evaluation") ratings.set(`${num(item.query_sequence)}|${item.knowledge_id}`, item);
      if (type === "extraction_reviewed" || type === "extraction_committed") {
        if (!reviews.has(item.extraction_id)) reviews.set(item.extraction_id, []);
        reviews.get(item.extraction_id).push(event);
      }
    }
    const children = events.map((event) => {
      const { type, body: item } = eventType(event);
      if (type === "query") {
        return node(["query: “", clip(item.query, 120), "”"], (item.source_ids || []).map((id) => {
          const rating = ratings.get(`${num(item.sequence)}|${id}`);
          const status = rating ? (rating.eval_result || {}).status : "not evaluated";
          return leaf(link(`#/knowledge/${encodeURIComponent(id)}`, id), " → ", badge(status || "?", status === "not evaluated" ? "pending" : status),
            rating && rating.eval_result && rating.eval_result.reason ? ` ${clip(rating.eval_result.reason, 120)}` : "");
        }));
      }
      if (type === "extraction_pending") {
        return node(["extraction ", item.extraction_id, ": “", clip((item.payload || {}).task, 100), "”"],
          (reviews.get(item.extraction_id) || []).map((later) => leaf(describe(later))), true);
      }
      if (["evaluation", "extraction_reviewed", "extraction_committed"].includes(type)) return null;
      return leaf(h("span", { class: "kind" }, type), " ", describe(event));
    });
    return node(`Step ${num(step.sequence)}`, children);
  });
  body.append(h("div", { class: "tree" },
    node(["Trace: ", (data.trace || {}).task || (data.trace || {}).trace_id], steps.length ? steps : leaf("no steps yet"))));
}

function planTab(body, data) {
  const plans = data.plan_evolution || [];
  body.append(plans.length
    ? table(["Version", "What changed", "When"], plans.map((event) => {
      const plan = event.plan_evolution || {};
      return h("tr", { class: "plan-row" }, h("td", {}, `v${num(plan.plan_version)}`),
        h("td", {}, pre(plan.diff_summary)), h("td", {}, when(event.timestamp)));
    }))
    : empty("No plan_evolution events in this trace."));
}

// KnowHub's agent tools are knowledge search (query events) and knowledge_save_pending
// (extractions): which records the trace used and how they rated, and what it extracted.
function toolsTab(body, data) {
  const knowledge = data.knowledge || [];
  const funnel = data.extraction_funnel || {};
  const stepEvents = (data.timeline || []).flatMap((step) => step.events || []);
  const toolMessages = stepEvents.filter((event) => event.message && event.message.role === "tool");
  const refused = stepEvents.filter((event) => event.feedback_refused).map((event) => event.feedback_refused);
  body.append(
    section("Knowledge search results and their evaluations", knowledge.length
      ? table(["Knowledge", "Queried", "Helpful", "Harmful", "Neutral", "Unused", "Irrelevant",
        "Feedback deferred", "Feedback refused"],
        knowledge.map((item) => h("tr", { class: "knowledge-use" },
          h("td", {}, link(`#/knowledge/${encodeURIComponent(item.knowledge_id)}`, item.knowledge_id)),
          [item.queried, item.helpful, item.harmful, item.neutral, item.unused, item.irrelevant,
            item.feedback_deferred, item.feedback_refused].map((count) => h("td", {}, count || 0)))))
      : empty("The trace used no knowledge."),
    refused.length ? h("ul", { class: "feedback-refused" }, refused.map((item) => h("li", {},
      badge(item.code, "refused"), ` ${item.status} verdict on ${item.knowledge_id} (query ${num(item.query_sequence)}) `,
      "was not applied: ", item.message))) : null,
    (data.pending_query_sequences || []).length
      ? h("p", {}, "Queries waiting for evaluation: ", data.pending_query_sequences.map(num).join(", ")) : null),
    section("Extractions (knowledge_save_pending)", fields(
      ["saved", "reviewed", "pending", "approved", "edited", "discarded", "committed"].map((name) =>
        [name, funnel[name] || 0]))),
    section("Tool messages", toolMessages.length ? toolMessages.map(eventLine) : empty("No tool messages.")));
}

function memoryTab(body, data) {
  const counts = data.memory_counts || [];
  const events = data.memory_timeline || [];
  const filter = h("select", { id: "memory-filter" }, h("option", { value: "" }, "every memory type"),
    counts.map((count) => h("option", { value: count.memory_type }, count.memory_type)));
  const timeline = h("div", { class: "memory-timeline" });
  const show = () => timeline.replaceChildren(...events.filter((event) =>
    !filter.value || eventType(event).body.memory_type === filter.value).map(eventLine));
  filter.addEventListener("change", show);
  show();
  body.append(
    section("Reads and writes", counts.length
      ? table(["Memory type", "Reads", "Writes"], counts.map((count) =>
        h("tr", {}, h("td", {}, count.memory_type), h("td", {}, count.reads || 0), h("td", {}, count.writes || 0))))
      : empty("No memory_read or memory_write events."),
    h("div", { class: "row" }, "Show", filter), timeline),
    section("Reflections", (data.reflections || []).length ? data.reflections.map(eventLine) : empty("No reflections yet.")));
}

async function eventsTab(body, data, trace_id) {
  const type = h("select", { id: "event-type" }, h("option", { value: "" }, "every type"),
    EVENT_TYPES.map((name) => h("option", { value: name }, name)));
  const rows = h("div", { class: "raw-events" });
  const more = button("More", () => next());
  const slot = h("div");
  const download = h("span");
  let page_token = "";
  const next = async () => {
    const response = await guarded(slot, () => call("cognition", "GetLog",
      { trace_id, types: type.value ? [type.value] : [], page_size: 100, page_token }));
    if (!response) return;
    rows.append(...(response.events || []).map((event) => h("details", { class: "raw-event" },
      h("summary", {}, h("span", { class: "kind" }, event.event_id), describe(event)), json(event))));
    page_token = response.next_page_token || "";
    more.hidden = !page_token;
  };
  type.addEventListener("change", () => { rows.replaceChildren(); page_token = ""; next(); });
  const exportLog = button("Export log (JSON)", async () => {
    const response = await guarded(download, () => call("cognition", "ExportLog", { trace_id }));
    if (!response) return;
    const url = URL.createObjectURL(new Blob([response.document], { type: "application/json" }));
    download.replaceChildren(h("a", { href: url, download: `${trace_id}.json` }, `download ${trace_id}.json`));
  });
  body.append(h("div", { class: "row" }, "Show", type, exportLog, download), slot, rows, more);
  await next();
  if (!rows.children.length) rows.append(empty("No events."));
}
