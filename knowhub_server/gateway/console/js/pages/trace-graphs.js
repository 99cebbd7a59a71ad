// The trace page's graph tabs: the decision tree, the plan (its versions, the current
// TaskGraph and two versions side by side with their diff) and the tool dependency graph.
// Each graph's nodes are clickable and show their details beside it.

import { call } from "../api.js";
import {
  badge, button, empty, fields, guarded, h, link, list, num, section, table, when,
} from "../dom.js";
import { clip, enumName, eventLine, eventType } from "../events.js";
import { graph } from "../graph.js";

// A graph and the details of the node last clicked: beside it, or below it when `stacked`.
function explorable(spec, details, hint, stacked = false) {
  const panel = h("div", { class: "node-details", "data-graph": spec.name }, empty(hint));
  const drawing = graph({ ...spec, onSelect: (id) => panel.replaceChildren(h("div", { "data-node-id": id }, details(id))) });
  return h("div", { class: `graph-with-details${stacked ? " stacked" : ""}` }, drawing, panel);
}

function legend(items) {
  return h("div", { class: "legend" }, items.map(([classes, text]) =>
    h("span", { class: "legend-item" }, h("span", { class: `legend-swatch ${classes}` }), text)));
}

const STATE_LEGEND = [["state-ok", "ok"], ["state-failed", "failed"], ["state-retryable", "retryable"],
  ["state-running", "running"], ["state-pending", "not run yet"], ["dropped", "dropped by a replan"]];

const edgeOf = (edge) => ({
  from: edge.from_node_id, to: edge.to_node_id,
  label: edge.execution_order ? `#${edge.execution_order}` : "", classes: edge.execution_order ? "ran" : "not-run",
});

function nodeClasses(node) {
  return [`state-${enumName(node.state) || "none"}`, node.in_current_plan ? "" : "dropped"].join(" ");
}

// ---- Decision tree -----------------------------------------------------------------------

export function treeTab(body, data) {
  const tree = data.decision_tree || {};
  const nodes = tree.nodes || [];
  if (nodes.length) {
    const byId = new Map(nodes.map((node) => [node.node_id, node]));
    body.append(section(`Decision tree${num(tree.plan_version) ? ` (plan v${num(tree.plan_version)})` : ""}`,
      h("p", { class: "muted" }, "Each node is a step of the plan, labelled with its choice; edges follow the plan, ",
        "numbered in the order their target ran. A node with several successors branches; a leaf ends a branch with its outcome."),
      legend(STATE_LEGEND),
      explorable({
        name: "decision-tree",
        nodes: nodes.map((node) => ({
          id: node.node_id, title: node.node_id, classes: `${nodeClasses(node)}${node.branch ? " branch" : ""}${node.leaf ? " leaf" : ""}`,
          lines: [stateLine(node), choiceLabel(node)],
        })),
        edges: (tree.edges || []).map(edgeOf),
      }, (id) => treeDetails(byId.get(id)), "Click a node to see its choices and outcome.")));
  }
  body.append(section("Knowledge decisions", knowledgeGraph(data)));
}

function stateLine(node) {
  const state = enumName(node.state) || "no outcome";
  const attempts = num(node.attempts) > 1 ? ` · ${num(node.attempts)} attempts` : "";
  const shape = node.leaf ? " · leaf" : node.branch ? " · branch" : "";
  return `${state}${attempts}${shape}`;
}

function choiceLabel(node) {
  const labels = (node.choices || []).map((event) => {
    const { type, body } = eventType(event);
    return type === "tool_selected" ? `tool: ${body.tool_name}` : body.content;
  });
  return [...new Set(labels)].join(" / ") || node.tool_name || node.node_type || "";
}

function treeDetails(node) {
  const state = enumName(node.state);
  return [
    h("h3", {}, node.node_id),
    fields([
      ["State", state ? badge(state, state) : "—"],
      ["Attempts", num(node.attempts)],
      ["Step", num(node.step_index) || "—"],
      ["Type", node.node_type || "—"],
      ["Tool", node.tool_name || "—"],
      ["What it does", node.description || "—"],
      ["Shape", node.leaf ? "leaf (ends a branch)" : node.branch ? "branches" : "passes on"],
      ["In the current plan", node.in_current_plan ? "yes" : "no: a replan dropped it"],
    ]),
    h("h3", {}, "Choices"),
    (node.choices || []).length ? node.choices.map(eventLine) : empty("No decision_made or tool_selected for this node."),
  ];
}

const REVIEWED = { approve: "approved", edit: "edited", discard: "discarded" };

// Each message step's knowledge queries, what they returned and how it was rated, and its
// extractions with their review: the choices an agent that logs only queries made.
function knowledgeGraph(data) {
  const nodes = [];
  const edges = [];
  const events = new Map();
  for (const step of data.timeline || []) {
    const sequence = num(step.sequence);
    const stepId = `step-${sequence}`;
    const ratings = new Map();
    const reviews = new Map();
    for (const event of step.events || []) {
      const { type, body } = eventType(event);
      if (type === "evaluation") ratings.set(`${num(body.query_sequence)}|${body.knowledge_id}`, body);
      if (type === "extraction_reviewed" || type === "extraction_committed") {
        reviews.set(body.extraction_id, [...(reviews.get(body.extraction_id) || []), event]);
      }
    }
    const children = [];
    for (const event of step.events || []) {
      const { type, body } = eventType(event);
      if (type === "query") {
        const queryId = `query-${num(body.sequence)}`;
        children.push({ id: queryId, title: "query", lines: [clip(body.query, 60)], classes: "kind-query" });
        events.set(queryId, [event]);
        for (const knowledgeId of body.source_ids || []) {
          const rating = ratings.get(`${num(body.sequence)}|${knowledgeId}`);
          const status = rating ? (rating.eval_result || {}).status : "not evaluated";
          const id = `knowledge-${num(body.sequence)}-${knowledgeId}`;
          nodes.push({ id, title: knowledgeId, lines: [status], classes: `rating-${status.replace(" ", "-")}` });
          edges.push({ from: queryId, to: id });
          events.set(id, (step.events || []).filter((item) => {
            const found = eventType(item);
            return found.type === "evaluation" && found.body.knowledge_id === knowledgeId;
          }));
        }
      } else if (type === "extraction_pending") {
        const later = reviews.get(body.extraction_id) || [];
        const last = later.length ? eventType(later[later.length - 1]) : null;
        const state = !last ? "pending" : last.type === "extraction_committed" ? "committed" : REVIEWED[last.body.decision];
        const id = `extraction-${body.extraction_id}`;
        children.push({ id, title: "extraction", lines: [clip((body.payload || {}).task, 60), state], classes: `rating-${state}` });
        events.set(id, [event, ...later]);
      }
    }
    if (!children.length) continue;
    nodes.push({ id: stepId, title: `Step ${sequence}`, lines: [`${children.length} choice${children.length > 1 ? "s" : ""}`], classes: "kind-step" });
    events.set(stepId, step.events || []);
    for (const child of children) {
      nodes.push(child);
      edges.push({ from: stepId, to: child.id });
    }
  }
  if (!nodes.length) return empty("No knowledge queries or extractions in this trace.");
  const titles = new Map(nodes.map((node) => [node.id, node.title]));
  return explorable({ name: "knowledge-tree", nodes, edges, rankdir: "LR" },
    (id) => [h("h3", {}, titles.get(id)), (events.get(id) || []).map(eventLine)],
    "Click a step, query, knowledge record or extraction to see its events.");
}

// ---- Plan --------------------------------------------------------------------------------

export function planTab(body, data, at) {
  const plans = data.plan_snapshots || [];
  if (!plans.length) {
    body.append(empty("No plan_generated, decision_snapshot or plan_evolution events in this trace."));
    return;
  }
  const states = new Map(((data.decision_tree || {}).nodes || []).map((node) => [node.node_id, enumName(node.state)]));
  body.append(section("Plan versions", table(["Version", "From", "Goal", "What changed", "Why", "When"],
    plans.map((plan) => h("tr", { class: "plan-row", "data-plan-version": num(plan.plan_version) },
      h("td", {}, `v${num(plan.plan_version)}`), h("td", {}, plan.source),
      h("td", {}, plan.goal || "—"),
      h("td", {}, plan.diff_summary ? [plan.diff_summary, plan.diff_computed ? h("span", { class: "muted" }, " (computed)") : ""] : "—"),
      h("td", {}, clip(plan.reasoning_summary || plan.task_graph_summary, 200) || "—"),
      h("td", {}, when(plan.timestamp)))))));
  const current = [...plans].reverse().find((plan) => plan.task_graph);
  if (current) {
    body.append(section(`Current plan: v${num(current.plan_version)}`, legend(STATE_LEGEND.slice(0, 5)),
      planGraph(current, "plan-current", { states })));
  }
  if (plans.length > 1) body.append(compareSection(at, plans, data.plan_diff || {}));
}

function planGraph(plan, name, { states = new Map(), marks = new Map(), edgeMarks = new Map(), stacked = false } = {}) {
  const graphData = plan.task_graph || {};
  const nodes = graphData.nodes || [];
  if (!nodes.length) return empty(`v${num(plan.plan_version)} has no task graph${plan.task_graph_summary ? `: ${plan.task_graph_summary}` : "."}`);
  const byId = new Map(nodes.map((node) => [node.id, node]));
  return explorable({
    name,
    nodes: nodes.map((node) => ({
      id: node.id, title: node.id,
      lines: [[node.type, node.tool_name].filter(Boolean).join(": "), node.description],
      classes: `state-${states.get(node.id) || "none"} ${marks.get(node.id) || ""}`,
    })),
    edges: (graphData.edges || []).map((edge) => ({
      from: edge.from_node, to: edge.to_node, classes: edgeMarks.get(`${edge.from_node}>${edge.to_node}`) || "",
    })),
  }, (id) => {
    const node = byId.get(id);
    return [h("h3", {}, id), fields([
      ["Type", node.type || "—"], ["Tool", node.tool_name || "—"], ["Workflow", node.workflow || "—"],
      ["What it does", node.description || "—"], ["State now", states.get(id) || "—"],
      ["Marked", marks.get(id) ? marks.get(id).replace("diff-", "") : "unchanged"],
    ])];
  }, "Click a step to see it.", stacked);
}

// `at`: the trace (trace_id, owner), the job and the window the page shows.
function compareSection(at, plans, first) {
  const versions = plans.map((plan) => num(plan.plan_version));
  const choice = (id, chosen) => h("select", { id }, versions.map((version) =>
    h("option", { value: version, selected: version === chosen }, `v${version}`)));
  const from = choice("plan-diff-from", num(first.from_version));
  const to = choice("plan-diff-to", num(first.to_version));
  const slot = h("div", { class: "plan-diff-slot" });
  const show = (diff, snapshots) => slot.replaceChildren(diffView(diff, snapshots));
  const compare = button("Compare", async () => {
    const response = await guarded(slot, () => call("cognition", "GetTraceView", {
      trace_id: at.trace_id, owner: at.owner, job_id: at.job_id, page_token: at.window,
      plan_diff_from: Number(from.value), plan_diff_to: Number(to.value),
    }));
    if (response) show(response.plan_diff || {}, response.plan_snapshots || []);
  }, { id: "plan-diff-compare" });
  show(first, plans);
  return section("Compare two versions", h("div", { class: "row" }, "Compare", from, "with", to, compare), slot);
}

function diffView(diff, plans) {
  const byVersion = new Map(plans.map((plan) => [num(plan.plan_version), plan]));
  const before = byVersion.get(num(diff.from_version)) || {};
  const after = byVersion.get(num(diff.to_version)) || {};
  const changed = (diff.changed_nodes || []).map((change) => change.node_id);
  const edgeKey = (edge) => `${edge.from_node}>${edge.to_node}`;
  const marked = (nodes, mark) => nodes.map((node) => [node.id, mark]);
  const beforeMarks = new Map([...marked(diff.removed_nodes || [], "diff-removed"), ...changed.map((id) => [id, "diff-changed"])]);
  const afterMarks = new Map([...marked(diff.added_nodes || [], "diff-added"), ...changed.map((id) => [id, "diff-changed"])]);
  const side = (plan, marks, edgeMarks, name) => h("div", { class: `plan-side plan-side-${name}` },
    h("h3", {}, `v${num(plan.plan_version)}`, plan.goal ? h("span", { class: "muted" }, ` — ${plan.goal}`) : ""),
    planGraph(plan, `plan-${name}`, { marks, edgeMarks, stacked: true }));
  return h("div", { class: "plan-diff", "data-from": num(diff.from_version), "data-to": num(diff.to_version) },
    h("p", { class: "diff-summary" }, h("strong", {}, `v${num(diff.from_version)} → v${num(diff.to_version)}: `),
      diff.summary || "no summary", diff.computed ? h("span", { class: "muted" }, " (computed from the task graphs)") : "",
      diff.goal_changed ? [" ", badge("goal changed", "pending")] : ""),
    legend([["diff-added", "added"], ["diff-removed", "removed"], ["diff-changed", "changed"]]),
    h("div", { class: "grid2" },
      side(before, beforeMarks, new Map((diff.removed_edges || []).map((edge) => [edgeKey(edge), "diff-removed"])), "from"),
      side(after, afterMarks, new Map((diff.added_edges || []).map((edge) => [edgeKey(edge), "diff-added"])), "to")),
    fields([
      ["Added", list((diff.added_nodes || []).map((node) => node.id))],
      ["Removed", list((diff.removed_nodes || []).map((node) => node.id))],
      ["Changed", (diff.changed_nodes || []).length ? diff.changed_nodes.map((change) => `${change.node_id} (${change.changes.join("; ")})`).join(", ") : "—"],
      ["Edges added", list((diff.added_edges || []).map((edge) => `${edge.from_node} → ${edge.to_node}`))],
      ["Edges removed", list((diff.removed_edges || []).map((edge) => `${edge.from_node} → ${edge.to_node}`))],
    ]));
}

// ---- Tools -------------------------------------------------------------------------------

export function toolsTab(body, data) {
  const tools = data.tool_graph || {};
  const nodes = tools.nodes || [];
  if (nodes.length) {
    const byId = new Map(nodes.map((node) => [node.node_id, node]));
    body.append(section("Tool dependency graph",
      h("p", { class: "muted" }, "Steps and the steps whose output they depend on. Nodes that call a tool are tool nodes; the others are LLM or logic nodes."),
      legend([["kind-tool", "tool node"], ["kind-llm", "LLM / logic node"], ...STATE_LEGEND.slice(1, 3)]),
      explorable({
        name: "tool-graph", rankdir: "LR",
        nodes: nodes.map((node) => ({
          id: node.node_id, title: node.node_id,
          classes: `kind-${node.tool_node ? "tool" : "llm"} ${nodeClasses(node)}`,
          lines: [node.tool_node ? `tool: ${[...new Set((node.calls || []).map((c) => c.tool_name))].join(", ") || node.node_type}` : `${node.node_type || "logic"} node`,
            `${enumName(node.state) || "no outcome"}${node.finish_order ? ` · finished #${node.finish_order}` : ""}`],
        })),
        edges: (tools.edges || []).map(edgeOf),
      }, (id) => toolDetails(byId.get(id)), "Click a node to see its tool calls.")));
  }
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

function toolDetails(node) {
  const state = enumName(node.state);
  const calls = node.calls || [];
  return [
    h("h3", {}, node.node_id),
    fields([
      ["Kind", node.tool_node ? "tool node" : "LLM / logic node"],
      ["Type", node.node_type || "—"],
      ["What it does", node.description || "—"],
      ["State", state ? badge(state, state) : "—"],
      ["Finished", node.finish_order ? `#${node.finish_order}` : "not yet"],
    ]),
    h("h3", {}, "Tool calls"),
    calls.length ? calls.map((item) => h("div", { class: "tool-call card", "data-tool": item.tool_name },
      h("strong", {}, item.tool_name), h("span", { class: "muted" }, ` attempt ${item.attempt || 1}`),
      fields([
        ["Input", item.input_summary || "—"],
        ["Output", item.output_summary || "—"],
        ["Error", item.error ? badge(item.error, "failed") : "—"],
        ["External id", item.external_id || "—"],
        ["Provenance", [item.idempotent ? "idempotent" : "not idempotent", item.rollback_available ? "rollback available" : "",
          item.selected_event_id ? `selected in ${item.selected_event_id}` : "", item.result_event_id ? `result in ${item.result_event_id}` : ""]
          .filter(Boolean).join(" · ")],
        ["Why", item.reason || "—"],
      ]))) : empty("No tool calls."),
  ];
}

