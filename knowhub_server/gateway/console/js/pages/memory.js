// Memory: the historian's events (newest first, or searched; narrowed to a user or a group
// and a time span), a conversation's recent memos, and the profiles (listed or searched)
// with their revisions and restore. A subject named in an event opens its memos and
// profile, so no id needs typing.

import { call } from "../api.js";
import {
  badge, button, empty, fields, guarded, h, list, loading, pre, table, when,
} from "../dom.js";

const short = (value, prefix) => String(value || "").replace(prefix, "").toLowerCase();

export async function render(view, args, params = new URLSearchParams()) {
  const events = h("section", { class: "panel", id: "memory-events" });
  const memos = h("section", { class: "panel", id: "memos" });
  const profiles = h("section", { class: "panel", id: "profiles" });
  view.append(h("h1", {}, "Memory"), events, h("div", { class: "grid2" }, memos, profiles));
  const open = (subject) => {
    showMemos(memos, subject);
    showProfiles(profiles, subject);
  };
  showMemos(memos, null);
  showProfiles(profiles, null);
  await showEvents(events, params, open);
}

// ---- Events ----------------------------------------------------------------------------

function localInput(id, title) {
  return h("input", { id, type: "datetime-local", title, step: 1 });
}

const PAGE = 25;

async function showEvents(panel, params, open) {
  const query = h("input", { id: "events-query", type: "search", size: 30,
    placeholder: "search text (empty: newest first)", value: params.get("q") || "" });
  const user = h("input", { id: "events-user", placeholder: "user id", size: 12, value: params.get("user") || "" });
  const group = h("input", { id: "events-group", placeholder: "group id", size: 12, value: params.get("group") || "" });
  const from = localInput("events-from", "from (your time zone)");
  const to = localInput("events-to", "to (your time zone)");
  const results = h("div", { id: "event-results" });
  const form = h("form", { class: "row" }, query, h("span", { class: "muted" }, "subject"), user, group,
    h("span", { class: "muted" }, "from"), from, h("span", { class: "muted" }, "to"), to,
    h("button", { type: "submit", class: "primary" }, "Show"));
  const show = () => {
    const filters = { target_user_id: user.value.trim(), target_group_id: group.value.trim() };
    if (from.value) filters.time_from = new Date(from.value).toISOString();
    if (to.value) filters.time_to = new Date(to.value).toISOString();
    return query.value.trim() ? searchEvents(results, { ...filters, query: query.value.trim(), top_k: 50 }, open)
      : listEvents(results, filters, open);
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  panel.replaceChildren(h("h2", {}, "Events"),
    h("p", { class: "muted" }, "What the historian stored from agents' memos and observations. Times in your time zone; "
      + "a subject narrows to what that user said (with a group: in that group) or to one group's events."),
    form, results);
  await show();
}

const EVENT_HEADERS = ["When", "Event", "Subject", "Perspective"];

async function searchEvents(results, body, open) {
  results.replaceChildren(loading());
  const response = await guarded(results, () => call("dream", "SearchEvents", body));
  if (!response) return;
  const hits = response.hits || [];
  results.append(...(response.warnings || []).map((warning) => h("p", { class: "notice" }, warning)),
    hits.length ? table([...EVENT_HEADERS, "Score"], hits.map((hit) => eventRow(hit.event, open, (hit.score ?? 0).toFixed(3))))
      : empty("No events match."));
}

async function listEvents(results, filters, open) {
  results.replaceChildren(loading());
  const rows = h("tbody");
  const slot = h("div");
  const more = button("More", () => next(), { hidden: true, class: "more-events" });
  let page_token = "";
  const next = async () => {
    more.disabled = true;
    const response = await guarded(slot, () => call("dream", "ListEvents", { ...filters, page_size: PAGE, page_token }));
    if (!response) return;
    rows.append(...(response.events || []).map((event) => eventRow(event, open)));
    page_token = response.next_page_token || "";
    more.disabled = !page_token;
    more.hidden = !page_token;
  };
  results.replaceChildren(h("table", {}, h("thead", {}, h("tr", {}, EVENT_HEADERS.map((title) => h("th", {}, title)))), rows), slot, more);
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

function eventRow(event, open, score) {
  return h("tr", { class: "memory-event", "data-event-id": event.event_id },
    h("td", { class: "nowrap" }, when(event.timestamp)),
    h("td", {}, event.text, event.is_absolute ? null : h("div", { class: "muted" }, badge("not absolute", "pending"), ` ${event.warning || ""}`)),
    h("td", {}, subjectLinks(event, open), h("div", { class: "muted" }, event.scope || "")),
    h("td", {}, event.perspective || ""),
    score === undefined ? null : h("td", {}, score));
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
    results.append(memos.length ? table(["When", "Memo", "Sender"], memos.map((memo) => h("tr", { class: "memo" },
      h("td", { class: "nowrap" }, when(memo.created_at)), h("td", {}, memo.text), h("td", {}, memo.sender_id || ""))))
      : empty("No memos in this conversation."));
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  panel.replaceChildren(h("h2", {}, "Memos"), h("p", { class: "muted" }, "A conversation's short-term memos, newest first."), form, results);
  if (subject) show();
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
  panel.replaceChildren(h("h2", {}, "Profiles"), form, results, detail);
  show();
  if (subject) showProfile(detail, subject.type, subject.id, "");
}

async function showProfile(detail, entity_type, entity_id, scope) {
  detail.replaceChildren(loading());
  const key = { entity_type, entity_id, scope };
  const data = await guarded(detail, () => Promise.all([
    call("dream", "GetProfile", key), call("dream", "ListProfileRevisions", key)]));
  if (!data) return;
  const [{ profile }, { revisions = [] }] = data;
  const slot = h("div");
  detail.append(h("div", { class: "card profile", "data-entity-id": profile.entity_id },
    h("div", { class: "row" }, h("strong", {}, profile.name || profile.entity_id),
      badge(`revision ${profile.revision || 0}`, "ok"), h("span", { class: "muted" }, profile.reason || "")),
    fields([["Tags", list(profile.tags)], ["Scope", profile.scope || ""], ["Updated", when(profile.updated_at)],
      ["From event", profile.source_event_id || ""]]),
    pre(profile.markdown, { class: "profile-markdown" }),
    h("h3", {}, "Earlier revisions"), slot,
    revisions.length ? revisions.map((item) => h("div", { class: "card revision", "data-revision": item.profile.revision },
      h("div", { class: "row" }, h("strong", {}, `Revision ${item.profile.revision}`),
        h("span", { class: "muted" }, `replaced ${when(item.replaced_at)}`),
        button(`Restore revision ${item.profile.revision}`, async () => {
          const restored = await guarded(slot, () => call("dream", "RestoreProfileRevision",
            { ...key, scope: scope || profile.scope, revision: item.profile.revision }));
          if (restored) showProfile(detail, entity_type, entity_id, scope);
        }, { class: "restore" })),
      pre(item.profile.summary)))
      : empty("No earlier revisions.")));
}
