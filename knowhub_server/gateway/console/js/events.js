// A trace's events as the console shows them: which type an event is, one line saying
// what it is, and the names of the trace view's enums.

import { badge, h, link, list, num, when } from "./dom.js";

// Event.body's names: the JSON key holding an event's body, and its type for GetLog.
export const EVENT_TYPES = [
  "query", "evaluation", "extraction_pending", "extraction_reviewed", "extraction_committed",
  "reflection", "memory_read", "memory_write", "plan_evolution", "message",
  "node_started", "node_finished", "agent_thought_recorded", "decision_made", "tool_selected",
  "tool_result_summarized", "plan_generated", "decision_snapshot", "feedback_refused",
  "evaluation_failed",
];

export function eventType(event) {
  const type = EVENT_TYPES.find((name) => event[name]);
  return type ? { type, body: event[type] } : { type: "unknown", body: {} };
}

export function clip(text, size = 240) {
  const value = text || "";
  return value.length > size ? `${value.slice(0, size)}…` : value;
}

// NODE_STATE_OK -> "ok", JOB_STATUS_RUNNING -> "running", *_UNSPECIFIED -> "".
export function enumName(value) {
  const name = String(value || "").replace(/^(NODE_STATE|JOB_STATUS)_/, "").toLowerCase();
  return name === "unspecified" ? "" : name;
}

// Where in a job an event happened: "node · step 3".
export function place(body) {
  return [body.node_id, num(body.step_index) ? `step ${num(body.step_index)}` : ""].filter(Boolean).join(" · ");
}

// One line saying what an event is.
export function describe(event) {
  const { type, body } = eventType(event);
  const at = place(body) ? ` (${place(body)})` : "";
  switch (type) {
    case "message": return [badge(body.role || "message", "message"), " ", clip(body.content)];
    case "query": return [`asked “${clip(body.query, 160)}” → `, list(body.source_ids)];
    case "evaluation": return [`${body.knowledge_id}: `, badge((body.eval_result || {}).status || "?"),
      ` ${clip((body.eval_result || {}).reason, 160)}`, body.evaluated_at_trigger ? ` (at ${body.evaluated_at_trigger})` : ""];
    case "feedback_refused": return [`${body.knowledge_id}: `, badge(body.code || "?", "refused"),
      ` ${body.status} verdict not applied: ${clip(body.message, 160)}`];
    case "evaluation_failed": return [body.gave_up ? badge("evaluator gave up", "failed") : badge("not read", "refused"),
      ` queries ${(body.query_sequences || []).join(", ")}: ${clip(body.reason, 160)}`];
    case "extraction_pending": return [`${body.extraction_id}: “${clip((body.payload || {}).task, 160)}”`];
    case "extraction_reviewed": return [`${body.extraction_id}: `, badge(body.decision || "?")];
    case "extraction_committed": return [`${body.extraction_id} → `, link(`#/knowledge/${encodeURIComponent(body.knowledge_id)}`, body.knowledge_id)];
    case "reflection": return [`messages ${(body.sequence_range || []).join("–")}: ${clip(body.summary)}`,
      body.consumed_at ? ` (consumed ${when(body.consumed_at)})` : " (not consumed yet)"];
    case "memory_read": case "memory_write": return [badge(body.memory_type || "?", "memory"),
      ` ${body.key_or_scope || ""} ${clip(body.summary, 160)}`, at];
    case "plan_evolution": return [`plan v${num(body.plan_version)}: ${clip(body.diff_summary)}`];
    case "node_started": return [`${body.node_id} started, attempt ${body.attempt || 1}`, at];
    case "node_finished": return [`${body.node_id} finished `, badge(body.state || "ok"),
      body.reason ? ` ${clip(body.reason, 160)}` : "", num(body.duration_ms) ? ` in ${num(body.duration_ms)} ms` : ""];
    case "agent_thought_recorded": return [`thought: ${clip(body.content)}`, at];
    case "decision_made": return [`decision${body.kind ? ` (${body.kind})` : ""}: ${clip(body.content)}`, at];
    case "tool_selected": return [`chose ${body.tool_name}`, body.input_summary ? ` (${clip(body.input_summary, 120)})` : "", at];
    case "tool_result_summarized": return [`${body.tool_name} → `, body.error ? badge(`error: ${clip(body.error, 80)}`, "failed") : clip(body.summary, 160),
      body.external_id ? ` [${body.external_id}]` : "", at];
    case "plan_generated": case "decision_snapshot": return [
      `${type === "plan_generated" ? "plan" : "decision snapshot"}${num(body.plan_version) ? ` v${num(body.plan_version)}` : ""}`,
      body.goal ? `: ${clip(body.goal, 120)}` : "",
      body.task_graph ? ` (${(body.task_graph.nodes || []).length} nodes)` : "",
      body.reasoning_summary ? ` — ${clip(body.reasoning_summary, 160)}` : ""];
    default: return ["unknown event"];
  }
}

export function eventLine(event) {
  return h("div", { class: `event event-${eventType(event).type}` },
    h("span", { class: "kind" }, eventType(event).type), describe(event),
    h("span", { class: "muted" }, ` · ${when(event.timestamp)}`));
}
