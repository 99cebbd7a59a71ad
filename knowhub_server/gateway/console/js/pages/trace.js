// Traces: the list, and one trace in its debug view: a header (job, agent, goal,
// status, cursor), where its evaluation stands (with the evaluator's give-ups and a retry),
// and tabs — Timeline, Decision tree, Plan, Tools, Memory, Events — built from cognition
// GetTraceView (one window of the log at a time) and GetLog. The graphs are in
// trace-graphs.js. Each user names their own traces: a trace is its id and its owner.

import { call, callAll } from "../api.js";
import {
  badge, button, empty, fields, guarded, h, json, link, loading, num, section, table, when,
} from "../dom.js";
import { EVENT_TYPES, clip, describe, enumName, eventLine, eventType } from "../events.js";
import { planTab, toolsTab, treeTab } from "./trace-graphs.js";

const TABS = {
  timeline: ["Timeline", timelineTab],
  tree: ["Decision tree", treeTab],
  plan: ["Plan", planTab],
  tools: ["Tools", toolsTab],
  memory: ["Memory", memoryTab],
  events: ["Events", eventsTab],
};

// #/trace/<trace>/<tab>/<job>?owner=<user:ID>&window=<page token>&from=<events before it>
export async function render(view, args, params = new URLSearchParams()) {
  if (args.length) {
    await renderTrace(view, {
      trace_id: args[0], tab: TABS[args[1]] ? args[1] : "timeline", job_id: args[2] || "",
      owner: params.get("owner") || "", window: params.get("window") || "", from: num(params.get("from")),
    });
  } else {
    await renderList(view);
  }
}

// The hash of a trace's page: `at` holds tab, job, owner and the window (token, from).
export function traceHash(trace_id, at = {}) {
  const query = new URLSearchParams();
  if (at.owner) query.set("owner", at.owner);
  if (at.window) query.set("window", at.window);
  if (at.from) query.set("from", String(at.from));
  const tail = query.toString();
  return `#/trace/${encodeURIComponent(trace_id)}${at.tab ? `/${at.tab}` : ""}`
    + `${at.job ? `/${encodeURIComponent(at.job)}` : ""}${tail ? `?${tail}` : ""}`;
}

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
  if (!traces.length) {
    slot.append(empty("No traces visible to this token."));
    return;
  }
  const text = h("input", { id: "trace-filter", type: "search", size: 30, placeholder: "filter: id, task, agent, owner" });
  const agent = h("select", { id: "trace-agent" }, h("option", { value: "" }, "every agent"),
    [...new Set(traces.map((trace) => trace.agent_id).filter(Boolean))].sort().map((name) => h("option", { value: name }, name)));
  const waiting = h("select", { id: "trace-evaluation" }, h("option", { value: "" }, "any evaluation"),
    h("option", { value: "pending" }, "evaluations pending"), h("option", { value: "abandoned" }, "evaluator gave up"));
  const shown = h("span", { class: "muted", id: "trace-count" });
  const rows = traces.map((trace) => [trace, traceRow(trace)]);
  const apply = () => {
    const words = text.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    let count = 0;
    for (const [trace, row] of rows) {
      const haystack = [trace.trace_id, trace.task, trace.agent_id, trace.owner].join(" ").toLowerCase();
      const visible = words.every((word) => haystack.includes(word)) && (!agent.value || trace.agent_id === agent.value)
        && (waiting.value !== "pending" || num(trace.pending_evaluations) > 0)
        && (waiting.value !== "abandoned" || num(trace.abandoned_evaluations) > 0);
      row.hidden = !visible;
      count += visible ? 1 : 0;
    }
    shown.textContent = `${count} of ${traces.length} traces`;
  };
  text.addEventListener("input", apply);
  agent.addEventListener("change", apply);
  waiting.addEventListener("change", apply);
  slot.append(h("div", { class: "row" }, text, agent, waiting, shown),
    table(["Trace", "Task", "Agent", "Owner", "Events", "Pending evaluations", "Updated"], rows.map(([, row]) => row)));
  apply();
}

function traceRow(trace) {
  return h("tr", { class: "trace-row", "data-trace-id": trace.trace_id, "data-owner": trace.owner },
    h("td", {}, link(traceHash(trace.trace_id, { owner: trace.owner }), trace.trace_id)), h("td", {}, trace.task || ""),
    h("td", {}, trace.agent_id || ""), h("td", {}, trace.owner || ""), h("td", {}, num(trace.event_count)),
    h("td", { class: "pending-evaluations" }, trace.pending_evaluations || 0,
      trace.abandoned_evaluations ? [" ", badge("evaluator gave up", "failed")] : ""),
    h("td", { class: "nowrap" }, when(trace.updated_at)));
}

async function renderTrace(view, at) {
  const { trace_id, tab, job_id, owner, window } = at;
  view.append(h("p", {}, link("#/trace", "← all traces")));
  const slot = h("div");
  view.append(slot);
  const data = await guarded(slot, () => call("cognition", "GetTraceView",
    { trace_id, job_id, owner, page_token: window }));
  if (!data) return;
  const trace = data.trace || {};
  const header = data.header || {};
  const here = { ...at, owner: trace.owner || owner };
  view.append(...[
    h("h1", {}, "Trace ", h("span", { class: "trace-id" }, trace.trace_id || trace_id)),
    jobHeader(here, header, trace),
    evaluationPanel(here, data),
    windowBar(here, data)].filter(Boolean),
  h("nav", { class: "tabs" }, Object.entries(TABS).map(([name, [title]]) =>
      h("a", { href: traceHash(trace_id, { ...here, tab: name, job: job_id }), class: name === tab ? "active" : "", "data-tab": name }, title))));
  const body = h("div", { class: `tab tab-${tab}`, "data-tab": tab });
  view.append(body);
  await TABS[tab][1](body, data, { trace_id, job_id, owner: here.owner, window });
}

// Which events of the log the views show: a long trace is viewed a window at a time.
function windowBar(at, data) {
  const shown = num(data.window_events);
  const total = num((data.trace || {}).event_count);
  if (!at.window && !data.next_page_token) return null;
  const first = at.from + (shown ? 1 : 0);
  const move = (window, from) => traceHash(at.trace_id, { ...at, job: at.job_id, window, from });
  return h("div", { class: "row window-bar", "data-from": at.from },
    h("span", { class: "window-events" }, `events ${first}–${at.from + shown} of ${total}`),
    at.window ? link(move("", 0), "⏮ first window") : "",
    data.next_page_token ? link(move(data.next_page_token, at.from + shown), "next window ›") : "");
}

// Where the trace's evaluation stands: pending queries, failures the log holds, and a
// retry when an evaluator gave up.
function evaluationPanel(at, data) {
  const trace = data.trace || {};
  const failures = data.evaluation_failures || [];
  const abandoned = num(trace.abandoned_evaluations);
  if (!num(trace.pending_evaluations) && !failures.length) return null;
  const result = h("span", { class: "retry-result" });
  const retry = button("Retry evaluation", async () => {
    retry.disabled = true;
    const signal = await guarded(result, () => call("cognition", "SignalTrigger",
      { trace_id: at.trace_id, owner: at.owner, trigger: trace.last_trigger || "task_completion" }));
    if (signal) {
      result.replaceChildren(signal.published
        ? `published again (trigger ${signal.trigger_id}) for queries ${(signal.query_sequences || []).join(", ")}`
        : "nothing new to publish");
    } else {
      retry.disabled = false;
    }
  }, { class: "retry-evaluation" });
  return h("section", { class: "panel evaluation-state", "data-abandoned": abandoned },
    h("h2", {}, "Evaluation"),
    h("p", {}, `${num(trace.pending_evaluations)} queries wait for verdicts`,
      trace.last_trigger ? ` (last trigger ${trace.last_trigger})` : "", ". ",
      abandoned ? [badge("evaluator gave up", "failed"),
        ` on ${abandoned} of them: a new signal publishes them again. `, retry, " ", result] : ""),
    failures.length ? table(["When", "Queries", "What went wrong", "Answer"], failures.map((event) => {
      const { body } = eventType(event);
      return h("tr", { class: `evaluation-failure${body.gave_up ? " gave-up" : ""}` },
        h("td", {}, when(event.timestamp)), h("td", {}, (body.query_sequences || []).join(", ")),
        h("td", {}, body.gave_up ? [badge("gave up", "failed"), ` after ${body.deliveries || 0} deliveries: `] : "",
          body.reason || ""),
        h("td", {}, clip(body.answer_excerpt, 200)));
    })) : null);
}

// The header: job, agent, goal, status and cursor; then the trace's own record, and its
// deletion.
function jobHeader(at, header, trace) {
  const status = enumName(header.status);
  const jobs = header.job_ids || [];
  const job = jobs.length > 1
    ? h("select", {
      id: "job-select",
      onchange: (event) => { location.hash = traceHash(at.trace_id, { ...at, job: event.target.value }); },
    }, jobs.map((name) => h("option", { value: name, selected: name === header.job_id }, name)))
    : header.job_id || "—";
  const cursor = header.cursor_node_id
    ? `${header.cursor_node_id}${num(header.cursor_step_index) ? ` (step ${num(header.cursor_step_index)})` : ""}` : "—";
  return h("section", { class: "panel job-header" },
    h("div", { class: "job-fields" },
      headerField("Job", job, "job"),
      headerField("Agent", trace.agent_id || "—", "agent"),
      headerField("Goal", header.goal || trace.task || "—", "goal"),
      headerField("Status", status ? badge(status, status) : "no runtime events", "status"),
      headerField("Cursor", cursor, "cursor"),
      headerField("Plan", num(header.plan_version) ? `v${num(header.plan_version)}` : "—", "plan")),
    h("details", { class: "trace-record" }, h("summary", {}, "Trace record"), fields([
      ["Task", trace.task || ""],
      ["Owner", trace.owner || ""],
      ["Events", num(trace.event_count)],
      ["Last sequence", num(trace.last_sequence)],
      ["Reflected up to", num(trace.reflected_at_sequence)],
      ["Pending evaluations", `${trace.pending_evaluations || 0}${trace.last_trigger ? ` (last trigger ${trace.last_trigger})` : ""}`],
      ["Unconsumed reflections", trace.unconsumed_reflections || 0],
      ["Auto commit", trace.auto_commit ? "on" : "off"],
      ["Updated", when(trace.updated_at)],
    ])), deleteControl(at));
}

// Deleting takes two clicks: "Delete trace", then "Delete for good".
function deleteControl(at) {
  const slot = h("span", { class: "delete-result" });
  const confirm = button("Delete for good", async () => {
    confirm.disabled = true;
    const deleted = await guarded(slot, () => call("cognition", "DeleteTrace",
      { trace_id: at.trace_id, owner: at.owner }));
    if (deleted) location.hash = "#/trace";
    else confirm.disabled = false;
  }, { class: "danger confirm-delete", hidden: true });
  const start = button("Delete trace", () => { confirm.hidden = false; start.hidden = true; },
    { class: "delete-trace" });
  return h("div", { class: "row" }, start, confirm,
    h("span", { class: "muted" }, " the trace with its whole log; knowledge committed from it stays"), slot);
}

function headerField(label, value, name) {
  return h("div", { class: `job-field job-${name}`, "data-field": name }, h("span", { class: "muted" }, label), h("strong", {}, value));
}

// ---- Timeline: the reasoning steps, then the conversation by message sequence -------------

function timelineTab(body, data) {
  const steps = data.reasoning_steps || [];
  const plans = new Map((data.plan_snapshots || []).map((plan) => [num(plan.plan_version), plan]));
  if (steps.length) {
    const cards = h("div", { class: "reasoning-steps" });
    const bar = h("div", { class: "timeline-bar", role: "list" });
    let version = 0;
    steps.forEach((step, index) => {
      const stepVersion = num(step.plan_version);
      if (stepVersion !== version && stepVersion) {
        const plan = plans.get(stepVersion) || {};
        bar.append(h("span", { class: "bar-plan", title: plan.diff_summary || "" }, `plan v${stepVersion}`));
        cards.append(h("div", { class: "plan-marker", "data-plan-version": stepVersion },
          h("strong", {}, `Plan v${stepVersion}`), ` (${plan.source || "plan"})`,
          plan.diff_summary ? [": ", plan.diff_summary, plan.diff_computed ? h("span", { class: "muted" }, " (computed)") : ""] : ""));
        version = stepVersion;
      }
      const card = stepCard(step, index);
      const state = enumName(step.state) || "unknown";
      bar.append(button(step.node_id || `step ${num(step.step_index)}`, () => card.scrollIntoView({ block: "start" }),
        { class: `bar-step state-${state}`, role: "listitem", title: state }));
      cards.append(card);
    });
    body.append(section("Reasoning steps", bar, cards));
  }
  const sequences = data.timeline || [];
  body.append(section("Conversation and knowledge by message sequence", h("div", { class: "timeline" }, sequences.length
    ? sequences.map((step) => h("div", { class: "step", "data-sequence": num(step.sequence) },
      h("h3", {}, `Step ${num(step.sequence)}`), (step.events || []).map(eventLine)))
    : empty(steps.length ? "No messages or knowledge queries." : "No events with a message sequence yet."))));
}

const CARD_TITLES = {
  agent_thought_recorded: "Thought", decision_made: "Decision", tool_selected: "Tool", tool_result_summarized: "Result",
};

function stepCard(step, index) {
  const state = enumName(step.state);
  const attempts = step.attempts || [];
  return h("article", { class: `reasoning-step state-${state || "unknown"}`, "data-node-id": step.node_id || "", "data-step": num(step.step_index) },
    h("header", {},
      h("strong", {}, `${index + 1}. ${step.node_id || `step ${num(step.step_index)}`}`),
      num(step.step_index) ? h("span", { class: "muted" }, ` step ${num(step.step_index)}`) : "",
      state ? [" ", badge(state, state)] : "",
      attempts.length > 1 ? h("span", { class: "attempts" }, ` ${attempts.length} attempts: `,
        attempts.map((attempt) => `#${attempt.attempt} ${enumName(attempt.state)}${attempt.reason ? ` (${attempt.reason})` : ""}`).join(" → ")) : "",
      attempts.length === 1 && attempts[0].reason ? h("span", { class: "muted" }, ` ${attempts[0].reason}`) : ""),
    h("div", { class: "step-body" },
      h("div", { class: "step-cards" }, (step.cards || []).length
        ? (step.cards || []).map((event) => {
          const { type, body } = eventType(event);
          return h("div", { class: `step-card card-${type}` },
            h("div", { class: "card-title" }, CARD_TITLES[type] || type),
            cardText(type, body));
        }) : empty("No thought, decision or tool recorded.")),
      h("aside", { class: "step-memory" }, h("div", { class: "card-title" }, "Memory"),
        (step.memory || []).length ? step.memory.map((event) => {
          const { type, body } = eventType(event);
          return h("div", { class: `memory-item ${type}` }, badge(type === "memory_read" ? "read" : "write", type),
            " ", badge(body.memory_type, "memory"), ` ${body.key_or_scope || ""}`, h("div", { class: "muted" }, clip(body.summary, 160)));
        }) : h("span", { class: "muted" }, "none"))));
}

function cardText(type, body) {
  switch (type) {
    case "agent_thought_recorded": return h("p", {}, clip(body.content, 600));
    case "decision_made": return h("p", {}, body.kind ? badge(body.kind, "kind") : "", " ", clip(body.content, 600));
    case "tool_selected": return h("p", {}, h("code", {}, body.tool_name), body.input_summary ? [" ← ", clip(body.input_summary, 300)] : "",
      body.reason ? h("div", { class: "muted" }, clip(body.reason, 200)) : "");
    case "tool_result_summarized": return h("p", {}, body.error ? badge(`error: ${clip(body.error, 200)}`, "failed") : clip(body.summary, 400),
      body.external_id ? h("div", { class: "muted" }, `external id ${body.external_id}`) : "");
    default: return h("p", {}, describe({ [type]: body }));
  }
}

// ---- Memory and Events ---------------------------------------------------------------------

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

async function eventsTab(body, data, { trace_id, owner }) {
  const type = h("select", { id: "event-type" }, h("option", { value: "" }, "every type"),
    EVENT_TYPES.map((name) => h("option", { value: name }, name)));
  const rows = h("div", { class: "raw-events" });
  const more = button("More", () => next());
  const slot = h("div");
  const download = h("span");
  let page_token = "";
  const next = async () => {
    const response = await guarded(slot, () => call("cognition", "GetLog",
      { trace_id, owner, types: type.value ? [type.value] : [], page_size: 100, page_token }));
    if (!response) return;
    rows.append(...(response.events || []).map((event) => h("details", { class: "raw-event" },
      h("summary", {}, h("span", { class: "event-id" }, event.event_id), h("span", { class: "kind" }, eventType(event).type),
        h("span", { class: "event-text" }, describe(event)), h("span", { class: "muted event-time" }, when(event.timestamp))), json(event))));
    page_token = response.next_page_token || "";
    more.hidden = !page_token;
  };
  type.addEventListener("change", () => { rows.replaceChildren(); page_token = ""; next(); });
  const exportLog = button("Export log (JSON)", async () => {
    const file = await guarded(download, () => exportedLog(trace_id, owner));
    if (!file) return;
    const url = URL.createObjectURL(new Blob([JSON.stringify(file, null, 1)], { type: "application/json" }));
    download.replaceChildren(h("a", { href: url, download: `${trace_id}.json` },
      `download ${trace_id}.json (${file.events.length} events)`));
  });
  body.append(h("div", { class: "row" }, "Show", type, exportLog, download), slot, rows, more);
  await next();
  if (!rows.children.length) rows.append(empty("No events."));
}

// The whole log file, read a page at a time (each page is a document of its own).
async function exportedLog(trace_id, owner) {
  let file = null;
  let page_token = "";
  do {
    const page = await call("cognition", "ExportLog", { trace_id, owner, page_token });
    const part = JSON.parse(page.document);
    if (file) file.events.push(...part.events);
    else file = part;
    page_token = page.next_page_token || "";
  } while (page_token);
  return file;
}
