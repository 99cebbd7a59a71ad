// Dream: runs and their status, schedules, failed historian jobs with retry, and the
// memory documents of the agents the token knows of (written, edited and deleted here). (Profiles are on the memory page.)

import { call, callAll } from "../api.js";
import {
  badge, button, empty, guarded, h, loading, num, pre, table, when,
} from "../dom.js";

const PHASES = {
  DREAM_PHASE_PER_TRACE_REFLECT: "per-trace reflect",
  DREAM_PHASE_CROSS_TRACE_INTEGRATE: "cross-trace integrate",
};
const STATUSES = ["QUEUED", "RUNNING", "DONE", "SKIPPED", "FAILED"];

const short = (value, prefix) => String(value || "").replace(prefix, "").toLowerCase();
const phaseNames = (phases) => (phases && phases.length ? phases.map((p) => PHASES[p] || p).join(", ") : "both phases");

export async function render(view) {
  const runs = h("section", { class: "panel", id: "runs" });
  const schedules = h("section", { class: "panel", id: "schedules" });
  const failed = h("section", { class: "panel", id: "failed-jobs" });
  const documents = h("section", { class: "panel", id: "documents" });
  view.append(h("h1", {}, "Dream"), runs, schedules, failed, documents);
  // A schedule starting now fires at once: its run shows after the list is reloaded.
  const reloadRuns = await showRuns(runs);
  await Promise.all([showSchedules(schedules, reloadRuns), showFailedJobs(failed)]);
  await showDocuments(documents);
}

// ---- Runs ------------------------------------------------------------------------------

// The runs panel: start a run, look one up by id, and the list of the runs the token may
// read (ListDreamRuns, newest first) filtered by status and agent, a page at a time.
// Returns a function reloading the list.
async function showRuns(panel) {
  const agent = h("input", { name: "agent", placeholder: "agent id (default: the token's)", size: 26 });
  const phases = Object.entries(PHASES).map(([value, title]) =>
    h("label", {}, h("input", { type: "checkbox", value, checked: true }), ` ${title}`));
  const slot = h("div");
  const start = h("form", { class: "row" }, h("strong", {}, "Run now:"), agent, phases,
    h("button", { type: "submit", class: "primary" }, "Run dream"));
  const lookupId = h("input", { name: "run", placeholder: "run id (dream-…)", size: 40 });
  const lookup = h("form", { class: "row" }, h("strong", {}, "Look up:"), lookupId, h("button", { type: "submit" }, "Show"));
  const found = h("div", { id: "run-lookup" });
  const status = h("select", { id: "run-status" }, h("option", { value: "" }, "every status"),
    STATUSES.map((name) => h("option", { value: `DREAM_RUN_STATUS_${name}` }, name.toLowerCase())));
  const agentFilter = h("input", { id: "run-agent", placeholder: "only this agent", size: 20 });
  const filters = h("form", { class: "row" }, h("strong", {}, "Show:"), status, agentFilter,
    h("button", { type: "submit" }, "Refresh"));
  const runList = h("div", { id: "run-list" });
  // The gateway takes enums by name, and no empty name: "every status" leaves status out.
  const reload = () => listRuns(runList, { agent_id: agentFilter.value.trim(), ...(status.value ? { status: status.value } : {}) });

  start.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = phases.map((label) => label.querySelector("input")).filter((box) => box.checked).map((box) => box.value);
    if (await guarded(slot, () => call("dream", "RunDream", { agent_id: agent.value.trim(), phases: chosen }))) await reload();
  });
  lookup.addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = await guarded(found, () => call("dream", "GetDreamRun", { run_id: lookupId.value.trim() }));
    if (response) found.append(runTable([response.run]));
  });
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    reload();
  });
  status.addEventListener("change", reload);
  panel.replaceChildren(h("h2", {}, "Runs"), start, slot, lookup, found, filters, runList);
  await reload();
  return reload;
}

async function listRuns(list, filters) {
  list.replaceChildren(loading());
  const rows = h("tbody");
  const slot = h("div");
  const more = button("More", () => next(), { class: "more-runs", hidden: true });
  let page_token = "";
  const next = async () => {
    more.disabled = true;
    const response = await guarded(slot, () => call("dream", "ListDreamRuns", { ...filters, page_size: 20, page_token }));
    if (!response) return;
    rows.append(...(response.runs || []).map(runRow));
    page_token = response.next_page_token || "";
    more.disabled = !page_token;
    more.hidden = !page_token;
  };
  list.replaceChildren(runTable([], rows), slot, more);
  await next();
  if (!rows.children.length && !slot.children.length) {
    list.replaceChildren(empty(filters.status || filters.agent_id ? "No runs match." : "No runs yet: start one above."));
  }
}

function runTable(runs, rows = h("tbody")) {
  rows.append(...runs.map(runRow));
  return h("table", {}, h("thead", {}, h("tr", {},
    ["Run", "Agent", "Status", "Phases", "Counts", "Failures", "Created", "Started", "Finished"].map((title) => h("th", {}, title)))), rows);
}

function runRow(run) {
  const status = short(run.status, "DREAM_RUN_STATUS_") || "unspecified";
  const counts = run.counts || {};
  return h("tr", { class: "run-row", "data-run-id": run.run_id, "data-status": status },
    h("td", {}, run.run_id, run.schedule_id ? h("div", { class: "muted" }, `from ${run.schedule_id}`) : null,
      h("div", { class: "muted" }, `by ${run.requested_by || "?"}`)),
    h("td", {}, run.agent_id || ""),
    h("td", {}, badge(status), run.reason ? h("div", { class: "muted" }, run.reason) : null,
      num(run.attempts) > 1 ? h("div", { class: "muted" }, `${num(run.attempts)} attempts`) : null),
    h("td", { class: "phases" }, phaseNames(run.phases)),
    h("td", { class: "counts" }, Object.entries(counts).filter(([, value]) => value).map(([name, value]) =>
      h("div", {}, `${name.replace(/_/g, " ")}: ${value}`))),
    h("td", {}, (run.failures || []).map((failure) =>
      h("div", {}, `${PHASES[failure.phase] || failure.phase}${failure.trace_id ? ` ${failure.trace_id}` : ""}: ${failure.reason}`))),
    h("td", { class: "when" }, when(run.created_at)),
    h("td", { class: "when" }, when(run.started_at)),
    h("td", { class: "when" }, when(run.finished_at)));
}

// ---- Schedules ---------------------------------------------------------------------------

async function showSchedules(panel, onChange) {
  const agent = h("input", { name: "agent", placeholder: "agent id (default: the token's)", size: 26 });
  const every = h("input", { name: "every", type: "number", min: 1, placeholder: "every N minutes", size: 10 });
  const cron = h("input", { name: "cron", placeholder: "or cron: 0 3 * * *", size: 16 });
  const zone = h("input", { name: "zone", placeholder: "time zone (UTC)", size: 14 });
  const slot = h("div");
  const form = h("form", { class: "row" }, h("strong", {}, "New schedule:"), agent, every, cron, zone,
    h("button", { type: "submit" }, "Schedule"));
  const reload = async () => {
    const schedules = await showSchedules(panel, onChange);
    if (onChange) await onChange(schedules);
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { agent_id: agent.value.trim(), every_minutes: Number(every.value || 0), cron: cron.value.trim(), time_zone: zone.value.trim() };
    if (await guarded(slot, () => call("dream", "ScheduleDream", body))) await reload();
  });
  const rows = h("div", {}, loading());
  panel.replaceChildren(h("h2", {}, "Schedules"), form, slot, rows);
  const schedules = await guarded(rows, () => callAll("dream", "ListSchedules", { page_size: 100 }, "schedules"));
  if (!schedules) return [];
  rows.append(schedules.length ? table(["Schedule", "Agent", "When", "Phases", "Next run", "Last run", ""],
    schedules.map((schedule) => h("tr", { class: "schedule-row", "data-schedule-id": schedule.schedule_id },
      h("td", {}, schedule.schedule_id, h("div", { class: "muted" }, `by ${schedule.requested_by || "?"}`)),
      h("td", {}, schedule.agent_id || ""),
      h("td", {}, schedule.cron ? `cron ${schedule.cron} (${schedule.time_zone || "UTC"})` : `every ${schedule.every_minutes} min`),
      h("td", {}, phaseNames(schedule.phases)),
      h("td", {}, when(schedule.next_run_at)),
      h("td", {}, schedule.last_run_id ? [schedule.last_run_id, h("div", { class: "muted" }, when(schedule.last_fired_at))] : "—"),
      h("td", {}, button("Delete", async () => {
        if (await guarded(slot, () => call("dream", "DeleteSchedule", { schedule_id: schedule.schedule_id }))) await reload();
      }, { class: "delete" })))))
    : empty("No schedules."));
  return schedules;
}

// ---- Failed historian jobs ----------------------------------------------------------------

async function showFailedJobs(panel) {
  const slot = h("div");
  const rows = h("div", {}, loading());
  panel.replaceChildren(h("h2", {}, "Failed jobs"), h("div", { class: "row" }, button("Refresh", () => showFailedJobs(panel))), slot, rows);
  const jobs = await guarded(rows, () => callAll("dream", "ListFailedJobs", { page_size: 100 }, "jobs"));
  if (!jobs) return;
  rows.append(jobs.length ? table(["Job", "Error", "Deliveries", "Failed", "Conversation", "Memo / observations", ""],
    jobs.map((job) => {
      const retried = h("span");
      return h("tr", { class: "failed-job", "data-job-id": job.job_id },
        h("td", {}, job.job_id, h("div", { class: "muted" }, job.scope || "")),
        h("td", {}, job.error || ""),
        h("td", {}, job.deliveries || 0),
        h("td", {}, when(job.failed_at)),
        h("td", {}, [short(job.request_type, "REQUEST_TYPE_"), job.user_id && `user ${job.user_id}`, job.group_id && `group ${job.group_id}`].filter(Boolean).join(" · ")),
        h("td", {}, job.memo || "", (job.observations || []).map((text) => h("div", { class: "muted" }, `• ${text}`))),
        h("td", {}, button("Retry", async (event) => {
          event.target.disabled = true;
          if (await guarded(retried, () => call("dream", "RetryFailedJob", { job_id: job.job_id }))) {
            retried.replaceChildren(badge("requeued", "queued"));
          } else {
            event.target.disabled = false;
          }
        }, { class: "retry" }), retried));
    }))
    : empty("No failed jobs."));
}

// ---- Memory documents ----------------------------------------------------------------------

// The agents the token knows of (from its dream runs, schedules and traces), by name.
async function knownAgents() {
  const lists = await Promise.allSettled([
    callAll("dream", "ListDreamRuns", { page_size: 100 }, "runs", 2),
    callAll("dream", "ListSchedules", { page_size: 100 }, "schedules", 2),
    callAll("cognition", "ListTraces", { page_size: 100 }, "traces", 2)]);
  const agents = lists.flatMap((result) => (result.status === "fulfilled" ? result.value : []))
    .map((item) => item.agent_id).filter(Boolean);
  return [...new Set(agents)].sort();
}

async function showDocuments(panel) {
  // The first agent known is shown first; "" asks for the token's own agent.
  const agent = h("select", { id: "documents-agent" }, (await knownAgents()).map((name) => h("option", { value: name }, name)),
    h("option", { value: "" }, "the token's own agent"));
  const results = h("div", { id: "documents" });
  const show = async () => {
    const documents = await guarded(results, () => callAll("dream", "ListMemoryDocuments",
      { agent_id: agent.value, include_content: true, page_size: 100 }, "documents"));
    if (!documents) return;
    results.append(h("div", {}, documents.length ? documents.map((document) => documentCard(agent.value, document, show))
      : empty("No memory documents for this agent.")), newDocument(agent.value, show));
  };
  agent.addEventListener("change", show);
  panel.replaceChildren(h("h2", {}, "Memory documents"),
    h("p", { class: "muted" }, "Writing or deleting needs the agent's own token or an admin's; each write keeps the replaced revision."),
    h("div", { class: "row" }, "Agent", agent), results);
  await show();
}

// A document with an editor: Save replaces its content only if no one wrote it since it
// was read (its revision), Delete removes it with its kept revisions.
function documentCard(agentId, document, reshow) {
  const key = { agent_id: agentId, path: document.path };
  const content = h("textarea", { name: "content", value: document.content || "", rows: 8 });
  const slot = h("div");
  const save = h("form", { class: "edit-document" }, content, slot, h("div", { class: "actions" },
    h("button", { type: "submit", class: "primary" }, "Save document"),
    button("Delete document", async (event) => {
      if (event.target.dataset.confirm !== "1") {
        event.target.dataset.confirm = "1";
        event.target.textContent = "Delete with its revisions: click again to confirm";
        return;
      }
      if (await guarded(slot, () => call("dream", "DeleteMemoryDocument", key))) reshow();
    }, { class: "danger delete-document" })));
  save.addEventListener("submit", async (event) => {
    event.preventDefault();
    const written = await guarded(slot, () => call("dream", "WriteMemoryDocument", {
      ...key, content: content.value, mode: "DOCUMENT_WRITE_MODE_REPLACE", expected_revision: document.revision || 0 }));
    if (written) reshow();
  });
  return h("details", { class: "card document", "data-path": document.path },
    h("summary", { class: "row" }, h("strong", {}, document.path), badge(`revision ${document.revision || 0}`, "ok"),
      h("span", { class: "muted" }, `${num(document.size)} characters · `,
        document.run_id ? `run ${document.run_id}` : `written by ${document.written_by || "?"}`, ` · ${when(document.updated_at)}`)),
    pre(document.content), save);
}

function newDocument(agentId, reshow) {
  const path = h("input", { name: "path", placeholder: "e.g. notes/preferences.md", size: 40 });
  const content = h("textarea", { name: "content", rows: 5 });
  const slot = h("div");
  const form = h("form", { class: "edit", id: "new-document" }, h("label", {}, "Path"), path, h("label", {}, "Content"), content, slot,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create document")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const written = await guarded(slot, () => call("dream", "WriteMemoryDocument", {
      agent_id: agentId, path: path.value.trim(), content: content.value, expected_revision: 0 }));
    if (written) reshow();
  });
  return h("details", { class: "card" }, h("summary", {}, h("strong", {}, "New document")), form);
}
