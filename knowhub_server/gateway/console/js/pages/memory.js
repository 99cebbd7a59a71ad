// Memory: the historian's events (newest first, or searched; narrowed to a user or a group
// and a time span; current facts, or with their history), each editable and deletable with
// Undo; a historian job's status and one event looked up; a conversation's recent memos
// (edit, delete); and the profiles (listed or searched) with their revisions, restore, edit
// and delete. A subject named in an event opens its memos and profile, and an event's job
// id its job, so no id needs typing.

import { call } from "../api.js";
import {
  badge, button, empty, fields, guarded, h, list, loading, pre, table, when,
} from "../dom.js";

const short = (value, prefix) => String(value || "").replace(prefix, "").toLowerCase();

export async function render(view, args, params = new URLSearchParams()) {
  const events = h("section", { class: "panel", id: "memory-events" });
  const lookup = h("section", { class: "panel", id: "memory-lookup" });
  const memos = h("section", { class: "panel", id: "memos" });
  const profiles = h("section", { class: "panel", id: "profiles" });
  view.append(h("h1", {}, "Memory"), events, lookup, h("div", { class: "grid2" }, memos, profiles));
  const open = (subject) => {
    showMemos(memos, subject);
    showProfiles(profiles, subject);
  };
  const look = showLookup(lookup, params.get("job") || "");
  showMemos(memos, null);
  showProfiles(profiles, null);
  await showEvents(events, params, { open, ...look });
}

// ---- Events ----------------------------------------------------------------------------

function localInput(id, title) {
  return h("input", { id, type: "datetime-local", title, step: 1 });
}

const PAGE = 25;

// `actions`: open(subject) shows a conversation's memos and profile; job(id) and
// event(id, scope) show a historian job or one event in the lookup panel.
async function showEvents(panel, params, actions) {
  const query = h("input", { id: "events-query", type: "search", size: 30,
    placeholder: "search text (empty: newest first)", value: params.get("q") || "" });
  const user = h("input", { id: "events-user", placeholder: "user id", size: 12, value: params.get("user") || "" });
  const group = h("input", { id: "events-group", placeholder: "group id", size: 12, value: params.get("group") || "" });
  const from = localInput("events-from", "from (your time zone)");
  const to = localInput("events-to", "to (your time zone)");
  const history = h("input", { id: "events-history", type: "checkbox", checked: params.get("history") === "1" });
  const results = h("div", { id: "event-results" });
  const form = h("form", { class: "row" }, query, h("span", { class: "muted" }, "subject"), user, group,
    h("span", { class: "muted" }, "from"), from, h("span", { class: "muted" }, "to"), to,
    h("label", { class: "check", title: "also superseded facts, each linking to the event that replaced it" }, history, " show history"),
    h("button", { type: "submit", class: "primary" }, "Show"));
  const show = () => {
    const filters = { target_user_id: user.value.trim(), target_group_id: group.value.trim(), include_history: history.checked };
    if (from.value) filters.time_from = new Date(from.value).toISOString();
    if (to.value) filters.time_to = new Date(to.value).toISOString();
    return query.value.trim() ? searchEvents(results, { ...filters, query: query.value.trim(), top_k: 50 }, actions)
      : listEvents(results, filters, actions);
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  history.addEventListener("change", show);
  panel.replaceChildren(h("h2", {}, "Events"),
    h("p", { class: "muted" }, "What the historian stored from agents' memos and observations: current facts, with "
      + "\"show history\" also the ones newer facts superseded. Times in your time zone; a subject narrows to what that "
      + "user said (with a group: in that group) or to one group's events. Edit corrects an event's text; Delete can be undone "
      + "until the event is purged."),
    form, results);
  await show();
}

const EVENT_HEADERS = ["When", "Event", "Subject", "Perspective"];

async function searchEvents(results, body, actions) {
  results.replaceChildren(loading());
  const response = await guarded(results, () => call("dream", "SearchEvents", body));
  if (!response) return;
  const hits = response.hits || [];
  results.append(...(response.warnings || []).map((warning) => h("p", { class: "notice" }, warning)),
    hits.length ? table([...EVENT_HEADERS, "Score", ""], hits.map((hit) => eventRow(hit.event, actions, (hit.score ?? 0).toFixed(3))))
      : empty("No events match."));
}

async function listEvents(results, filters, actions) {
  results.replaceChildren(loading());
  const rows = h("tbody");
  const slot = h("div");
  const more = button("More", () => next(), { hidden: true, class: "more-events" });
  let page_token = "";
  const next = async () => {
    more.disabled = true;
    const response = await guarded(slot, () => call("dream", "ListEvents", { ...filters, page_size: PAGE, page_token }));
    if (!response) return;
    rows.append(...(response.events || []).map((event) => eventRow(event, actions)));
    page_token = response.next_page_token || "";
    more.disabled = !page_token;
    more.hidden = !page_token;
  };
  results.replaceChildren(h("table", {}, h("thead", {}, h("tr", {}, [...EVENT_HEADERS, ""].map((title) => h("th", {}, title)))), rows), slot, more);
  await next();
  if (!rows.children.length && !slot.children.length) results.replaceChildren(empty("No events yet."));
}

function subjectLinks(event, open) {
  const user = event.user_id ? button(`user ${event.user_id}`, () => open({ type: "ENTITY_TYPE_USER", id: event.user_id }),
    { class: "link subject", "data-user-id": event.user_id }) : null;
  const group = event.group_id ? button(`group ${event.group_id}`, () => open({ type: "ENTITY_TYPE_GROUP", id: event.group_id }),
    { class: "link subject", "data-group-id": event.group_id }) : null;
  return [user, group ? [" ", group] : null];
}

// What an event's state says: superseded (by which event, from when), deleted (purged
// when), corrected, or a restated fact.
function eventState(event, actions) {
  const state = short(event.state, "EVENT_STATE_");
  const notes = [];
  if (state === "superseded") {
    notes.push(h("div", { class: "superseded" }, badge("superseded", "pending"), ` from ${when(event.superseded_at)}`,
      event.superseded_by
        ? [" by ", button(event.superseded_by, () => actions.event(event.superseded_by, event.scope),
          { class: "link superseded-by", "data-event-id": event.superseded_by })]
        : " (retracted)"));
  }
  if (state === "deleted") {
    notes.push(h("div", { class: "deleted" }, badge("deleted", "failed"), ` restorable until ${when(event.purge_at)}`));
  }
  if (event.supersedes) {
    notes.push(h("div", { class: "muted" }, "replaced ", button(event.supersedes, () => actions.event(event.supersedes, event.scope),
      { class: "link supersedes" })));
  }
  if (event.edited_at) notes.push(h("div", { class: "muted" }, `edited ${when(event.edited_at)}`));
  if (!event.is_absolute) notes.push(h("div", { class: "muted" }, badge("not absolute", "pending"), ` ${event.warning || ""}`));
  return notes;
}

function eventRow(event, actions, score) {
  const row = h("tr", { class: `memory-event state-${short(event.state, "EVENT_STATE_") || "current"}`, "data-event-id": event.event_id });
  const replace = (next) => row.replaceWith(eventRow(next, actions, score));
  row.append(...[
    h("td", { class: "nowrap" }, when(event.timestamp)),
    h("td", { class: "event-text" }, h("span", { class: "text" }, event.text), eventState(event, actions)),
    h("td", {}, subjectLinks(event, actions.open), h("div", { class: "muted" }, event.scope || ""),
      event.job_id ? h("div", { class: "muted" }, "job ", button(event.job_id, () => actions.job(event.job_id),
        { class: "link job-link", "data-job-id": event.job_id })) : null),
    h("td", {}, event.perspective || ""),
    score === undefined ? null : h("td", {}, score),
    h("td", { class: "event-actions nowrap" }, eventActions(event, row, replace))].filter(Boolean));
  return row;
}

function eventActions(event, row, replace) {
  const key = { event_id: event.event_id, scope: event.scope || "" };
  const slot = h("div");
  if (short(event.state, "EVENT_STATE_") === "deleted") {
    return [button("Undo", async () => {
      const response = await guarded(slot, () => call("dream", "UndeleteEvent", key));
      if (response) replace(response.event);
    }, { class: "undelete-event" }), slot];
  }
  const edit = button("Edit", () => {
    const text = h("textarea", { name: "text", value: event.text, rows: 3 });
    const form = h("form", { class: "edit-event" }, text, h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Save"), button("Cancel", () => replace(event))), slot);
    form.addEventListener("submit", async (submitted) => {
      submitted.preventDefault();
      const response = await guarded(slot, () => call("dream", "UpdateEvent", { ...key, text: text.value }));
      if (response) replace(response.event);
    });
    row.querySelector(".event-text").replaceChildren(form);
    text.focus();
  }, { class: "edit-event" });
  const remove = button("Delete", async () => {
    const response = await guarded(slot, () => call("dream", "DeleteEvent", key));
    if (response) replace(response.event);
  }, { class: "danger delete-event" });
  return [edit, " ", remove, slot];
}

// ---- Jobs and single events --------------------------------------------------------------

const JOB_STATES = { pending: "pending", processing: "running", done: "done", failed: "failed" };

// A historian job looked up by id (an event's job links here), and one event by id (a
// superseded event's "by" links here). Returns the actions that show them.
function showLookup(panel, jobId) {
  const input = h("input", { id: "job-id", placeholder: "a job id from Remember", size: 40, value: jobId });
  const result = h("div", { id: "lookup-result" });
  const form = h("form", { class: "row" }, input, h("button", { type: "submit" }, "Look up job"));
  const job = async (id) => {
    input.value = id;
    result.replaceChildren(loading());
    const response = await guarded(result, () => call("dream", "GetMemoryJob", { job_id: id }));
    if (response) result.append(jobCard(response.job, actions));
    panel.scrollIntoView({ block: "nearest" });
  };
  const event = async (id, scope) => {
    result.replaceChildren(loading());
    const response = await guarded(result, () => call("dream", "GetEvent", { event_id: id, scope: scope || "" }));
    if (response) result.append(eventCard(response.event, actions));
    panel.scrollIntoView({ block: "nearest" });
  };
  const actions = { job, event };
  form.addEventListener("submit", (submitted) => { submitted.preventDefault(); if (input.value.trim()) job(input.value.trim()); });
  panel.replaceChildren(h("h2", {}, "Job status"),
    h("p", { class: "muted" }, "A remembered job: pending, processing, done (with the events it wrote and what it decided "
      + "for each observation) or failed (with its error)."), form, result);
  if (jobId) job(jobId);
  return actions;
}

function jobCard(job, actions) {
  const state = short(job.state, "MEMORY_JOB_STATE_");
  const decisions = job.decisions || [];
  const eventLink = (id) => (id ? button(id, () => actions.event(id, job.scope), { class: "link job-event", "data-event-id": id }) : "");
  return h("div", { class: "card memory-job", "data-job-id": job.job_id, "data-state": state },
    h("div", { class: "row" }, h("strong", {}, job.job_id), badge(state, JOB_STATES[state] || state)),
    job.error ? h("div", { class: "error job-error" }, job.error) : null,
    fields([["Scope", job.scope || ""], ["Deliveries", job.deliveries ?? 0], ["Created", when(job.created_at)],
      ["Updated", when(job.updated_at)],
      ["Events written", (job.event_ids || []).length ? (job.event_ids || []).map((id) => [eventLink(id), " "]) : "none"]]),
    decisions.length ? table(["Observation", "Decision", "Event", "Existing event", "Why"], decisions.map((decision) =>
      h("tr", { class: "decision" }, h("td", {}, decision.observation_index < 0 ? "memo" : decision.observation_index ?? 0),
        h("td", {}, badge(short(decision.action, "MEMORY_ACTION_"), "ok")), h("td", {}, eventLink(decision.event_id)),
        h("td", {}, eventLink(decision.target_event_id)), h("td", {}, decision.reason || "")))) : null);
}

function eventCard(event, actions) {
  return h("div", { class: "card event-detail", "data-event-id": event.event_id },
    h("div", { class: "row" }, h("strong", {}, event.event_id), badge(short(event.state, "EVENT_STATE_") || "current", "ok")),
    pre(event.text, { class: "event-detail-text" }), eventState(event, actions),
    fields([["When", when(event.timestamp)], ["Subject", [event.user_id && `user ${event.user_id}`, event.group_id && `group ${event.group_id}`]
      .filter(Boolean).join(" · ")], ["Perspective", event.perspective || ""], ["Scope", event.scope || ""],
    ["Job", event.job_id ? button(event.job_id, () => actions.job(event.job_id), { class: "link job-link" }) : ""]]));
}

// ---- Memos ---------------------------------------------------------------------------------

function showMemos(panel, subject) {
  const type = h("select", { id: "memos-type" }, h("option", { value: "REQUEST_TYPE_PRIVATE" }, "private chat with user"),
    h("option", { value: "REQUEST_TYPE_GROUP" }, "group"));
  const id = h("input", { id: "memos-id", placeholder: "user or group id", size: 16, value: subject ? subject.id : "" });
  if (subject) type.value = subject.type === "ENTITY_TYPE_GROUP" ? "REQUEST_TYPE_GROUP" : "REQUEST_TYPE_PRIVATE";
  const results = h("div", { id: "memo-list" });
  const form = h("form", { class: "row" }, type, id, h("button", { type: "submit" }, "Show memos"));
  const show = async () => {
    const group = type.value === "REQUEST_TYPE_GROUP";
    const body = { request_type: type.value, limit: 100, ...(group ? { group_id: id.value.trim() } : { user_id: id.value.trim() }) };
    results.replaceChildren(loading());
    const response = await guarded(results, () => call("dream", "RecentMemos", body));
    if (!response) return;
    const memos = (response.memos || []).slice().reverse();
    const conversation = group ? { request_type: type.value, group_id: id.value.trim() } : { request_type: type.value, user_id: id.value.trim() };
    results.append(memos.length ? table(["When", "Memo", "Sender", ""], memos.map((memo) => memoRow(memo, conversation, show)))
      : empty("No memos in this conversation."));
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  panel.replaceChildren(h("h2", {}, "Memos"), h("p", { class: "muted" }, "A conversation's short-term memos, newest first."), form, results);
  if (subject) show();
}

// A memo with Edit and Delete; `conversation` names its list, the memo's job id the memo.
function memoRow(memo, conversation, reshow) {
  const key = { ...conversation, job_id: memo.job_id };
  const slot = h("div");
  const text = h("td", { class: "memo-text" }, memo.text, memo.edited_at ? h("div", { class: "muted" }, `edited ${when(memo.edited_at)}`) : null);
  const edit = button("Edit", () => {
    const box = h("textarea", { name: "text", value: memo.text, rows: 3 });
    const form = h("form", { class: "edit-memo" }, box, h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Save"), button("Cancel", reshow)), slot);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (await guarded(slot, () => call("dream", "UpdateMemo", { ...key, text: box.value }))) reshow();
    });
    text.replaceChildren(form);
  }, { class: "edit-memo" });
  const remove = button("Delete", async (event) => {
    if (event.target.dataset.confirm !== "1") {
      event.target.dataset.confirm = "1";
      event.target.textContent = "Delete: click again";
      return;
    }
    if (await guarded(slot, () => call("dream", "DeleteMemo", key))) reshow();
  }, { class: "danger delete-memo" });
  return h("tr", { class: "memo", "data-job-id": memo.job_id || "" },
    h("td", { class: "nowrap" }, when(memo.created_at)), text, h("td", {}, memo.sender_id || ""),
    h("td", { class: "nowrap" }, memo.job_id ? [edit, " ", remove] : null, slot));
}

// ---- Profiles ------------------------------------------------------------------------------

function profileRow(profile, detail, score) {
  return h("tr", { class: "profile-row", "data-entity-id": profile.entity_id },
    h("td", {}, button(`${short(profile.entity_type, "ENTITY_TYPE_")} ${profile.entity_id}`,
      () => showProfile(detail, profile.entity_type, profile.entity_id, profile.scope), { class: "link open-profile" })),
    h("td", {}, profile.name || ""), h("td", {}, profile.revision || 0),
    h("td", { class: "nowrap" }, score === undefined ? when(profile.updated_at) : score.toFixed(3)));
}

function showProfiles(panel, subject) {
  const query = h("input", { id: "profile-query", type: "search", placeholder: "search profiles (empty: list them)", size: 26 });
  const type = h("select", { id: "profile-type" }, h("option", { value: "" }, "users and groups"),
    h("option", { value: "ENTITY_TYPE_USER" }, "users"), h("option", { value: "ENTITY_TYPE_GROUP" }, "groups"));
  const results = h("div", { id: "profile-results" });
  const detail = h("div", { id: "profile-detail" });
  const form = h("form", { class: "row" }, query, type, h("button", { type: "submit" }, "Show"));
  const entity = () => (type.value ? { entity_type: type.value } : {});
  const search = async () => {
    const response = await guarded(results, () => call("dream", "SearchProfiles", { query: query.value.trim(), top_k: 20, ...entity() }));
    if (!response) return;
    const hits = response.hits || [];
    results.append(hits.length ? table(["Profile", "Name", "Revision", "Score"], hits.map((hit) => profileRow(hit.profile, detail, hit.score || 0)))
      : empty("No profile matches."));
  };
  const list = async () => {
    const rows = h("tbody");
    const slot = h("div");
    const more = button("More", () => next(), { hidden: true, class: "more-profiles" });
    let page_token = "";
    const next = async () => {
      more.disabled = true;
      const response = await guarded(slot, () => call("dream", "ListProfiles", { ...entity(), page_size: PAGE, page_token }));
      if (!response) return;
      rows.append(...(response.profiles || []).map((profile) => profileRow(profile, detail)));
      page_token = response.next_page_token || "";
      more.disabled = !page_token;
      more.hidden = !page_token;
    };
    results.replaceChildren(h("table", {}, h("thead", {}, h("tr", {}, ["Profile", "Name", "Revision", "Updated"].map((t) => h("th", {}, t)))), rows), slot, more);
    await next();
    if (!rows.children.length && !slot.children.length) results.replaceChildren(empty("No profiles yet."));
  };
  const show = () => (query.value.trim() ? search() : list());
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  type.addEventListener("change", show);
  detail.addEventListener(PROFILE_CHANGED, show); // the list shows the new name and revision
  panel.replaceChildren(h("h2", {}, "Profiles"), form, results, detail);
  show();
  if (subject) showProfile(detail, subject.type, subject.id, "");
}

const PROFILE_CHANGED = "knowhub:profile-changed";

async function showProfile(detail, entity_type, entity_id, scope) {
  detail.replaceChildren(loading());
  const key = { entity_type, entity_id, scope };
  const data = await guarded(detail, () => Promise.all([
    call("dream", "GetProfile", key), call("dream", "ListProfileRevisions", key)]));
  if (!data) return;
  const [{ profile }, { revisions = [] }] = data;
  const slot = h("div");
  const again = () => {
    detail.dispatchEvent(new Event(PROFILE_CHANGED));
    return showProfile(detail, entity_type, entity_id, scope);
  };
  detail.append(h("div", { class: "card profile", "data-entity-id": profile.entity_id },
    h("div", { class: "row" }, h("strong", {}, profile.name || profile.entity_id),
      badge(`revision ${profile.revision || 0}`, "ok"), h("span", { class: "muted" }, profile.reason || "")),
    fields([["Tags", list(profile.tags)], ["Scope", profile.scope || ""], ["Updated", when(profile.updated_at)],
      ["From event", profile.source_event_id || ""]]),
    pre(profile.markdown, { class: "profile-markdown" }),
    profileEdit({ ...key, scope: scope || profile.scope || "" }, profile, again, () => {
      detail.dispatchEvent(new Event(PROFILE_CHANGED));
      detail.replaceChildren(h("p", { class: "notice profile-deleted" },
        `Deleted the profile of ${short(entity_type, "ENTITY_TYPE_")} ${entity_id}.`));
    }),
    h("h3", {}, "Earlier revisions"), slot,
    revisions.length ? revisions.map((item) => h("div", { class: "card revision", "data-revision": item.profile.revision },
      h("div", { class: "row" }, h("strong", {}, `Revision ${item.profile.revision}`),
        h("span", { class: "muted" }, `replaced ${when(item.replaced_at)}`),
        button(`Restore revision ${item.profile.revision}`, async () => {
          const restored = await guarded(slot, () => call("dream", "RestoreProfileRevision",
            { ...key, scope: scope || profile.scope, revision: item.profile.revision }));
          if (restored) again();
        }, { class: "restore" })),
      pre(item.profile.summary)))
      : empty("No earlier revisions.")));
}

// Edits a profile's name, tags and summary (only the changed ones, in the update mask),
// and deletes it with its revisions.
function profileEdit(key, profile, again, deleted) {
  const name = h("input", { name: "name", value: profile.name || "" });
  const tagsInput = h("input", { name: "tags", value: (profile.tags || []).join(", "), placeholder: "comma-separated" });
  const summary = h("textarea", { name: "summary", value: profile.summary || "" });
  const slot = h("div");
  const form = h("form", { class: "edit", id: "edit-profile" }, h("label", {}, "Name"), name, h("label", {}, "Tags"), tagsInput,
    h("label", {}, "Summary"), summary, slot, h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save profile")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const edited = { name: name.value.trim(), tags: tagsInput.value.split(",").map((tag) => tag.trim()).filter(Boolean), summary: summary.value };
    const before = { name: profile.name || "", tags: profile.tags || [], summary: profile.summary || "" };
    const changed = Object.keys(edited).filter((field) => JSON.stringify(edited[field]) !== JSON.stringify(before[field]));
    if (!changed.length) {
      slot.replaceChildren(h("p", { class: "notice" }, "Nothing changed."));
      return;
    }
    const body = { ...key, update_mask: changed.join(","), ...Object.fromEntries(changed.map((field) => [field, edited[field]])) };
    if (await guarded(slot, () => call("dream", "UpdateProfile", body))) again();
  });
  const removeSlot = h("div");
  const remove = button("Delete profile", async (event) => {
    if (event.target.dataset.confirm !== "1") {
      event.target.dataset.confirm = "1";
      event.target.textContent = "Delete profile and its revisions: click again to confirm";
      return;
    }
    if (await guarded(removeSlot, () => call("dream", "DeleteProfile", key))) deleted();
  }, { class: "danger delete-profile" });
  return h("details", { class: "card", id: "profile-edit" }, h("summary", {}, h("strong", {}, "Edit or delete")), form,
    h("div", { class: "row" }, remove, removeSlot));
}
