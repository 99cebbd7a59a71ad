// Memory: the historian's events (search, narrowed to a user or a group and a time span),
// a conversation's recent memos, and profiles with their revisions and restore. A subject
// named in a result opens its memos and profile, so no id needs typing.

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
    showProfileSearch(profiles, subject);
  };
  showEvents(events, params, open);
  showMemos(memos, null);
  showProfileSearch(profiles, null);
}

// ---- Events ----------------------------------------------------------------------------

function localInput(id, title) {
  return h("input", { id, type: "datetime-local", title, step: 1 });
}

function showEvents(panel, params, open) {
  const query = h("input", { id: "events-query", type: "search", size: 36, required: true,
    placeholder: "what to look for (required)", value: params.get("q") || "" });
  const user = h("input", { id: "events-user", placeholder: "user id", size: 14, value: params.get("user") || "" });
  const group = h("input", { id: "events-group", placeholder: "group id", size: 14, value: params.get("group") || "" });
  const from = localInput("events-from", "from (your time zone)");
  const to = localInput("events-to", "to (your time zone)");
  const top = h("select", { id: "events-top" }, [12, 25, 50, 100].map((n) => h("option", { value: n }, `top ${n}`)));
  const results = h("div", { id: "event-results" });
  const form = h("form", { class: "row" }, query, h("span", { class: "muted" }, "subject"), user, group,
    h("span", { class: "muted" }, "from"), from, h("span", { class: "muted" }, "to"), to, top,
    h("button", { type: "submit", class: "primary" }, "Search"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { query: query.value.trim(), target_user_id: user.value.trim(), target_group_id: group.value.trim(),
      top_k: Number(top.value) };
    if (from.value) body.time_from = new Date(from.value).toISOString();
    if (to.value) body.time_to = new Date(to.value).toISOString();
    results.replaceChildren(loading());
    const response = await guarded(results, () => call("dream", "SearchEvents", body));
    if (!response) return;
    const hits = response.hits || [];
    results.append(...(response.warnings || []).map((warning) => h("p", { class: "notice" }, warning)),
      hits.length ? table(["When", "Event", "Subject", "Perspective", "Score"], hits.map((hit) => eventRow(hit, open)))
        : empty("No events match."));
  });
  panel.replaceChildren(h("h2", {}, "Events"),
    h("p", { class: "muted" }, "What the historian stored from agents' memos and observations. Times in your time zone; "
      + "a subject narrows to what that user said (with a group: in that group) or to one group's events."),
    form, results);
}

function subjectLinks(event, open) {
  const user = event.user_id ? button(`user ${event.user_id}`, () => open({ type: "ENTITY_TYPE_USER", id: event.user_id }),
    { class: "link subject", "data-user-id": event.user_id }) : null;
  const group = event.group_id ? button(`group ${event.group_id}`, () => open({ type: "ENTITY_TYPE_GROUP", id: event.group_id }),
    { class: "link subject", "data-group-id": event.group_id }) : null;
  return [user, group ? [" ", group] : null];
}

function eventRow(hit, open) {
  const event = hit.event;
  return h("tr", { class: "memory-event", "data-event-id": event.event_id },
    h("td", { class: "nowrap" }, when(event.timestamp)),
    h("td", {}, event.text, event.is_absolute ? null : h("div", { class: "muted" }, badge("not absolute", "pending"), ` ${event.warning || ""}`)),
    h("td", {}, subjectLinks(event, open), h("div", { class: "muted" }, event.scope || "")),
    h("td", {}, event.perspective || ""),
    h("td", {}, (hit.score ?? 0).toFixed(3)));
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

function showProfileSearch(panel, subject) {
  const query = h("input", { id: "profile-query", type: "search", placeholder: "search profiles", size: 24 });
  const results = h("div", { id: "profile-results" });
  const detail = h("div", { id: "profile-detail" });
  const search = h("form", { class: "row" }, query, h("button", { type: "submit" }, "Search"));
  search.addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = await guarded(results, () => call("dream", "SearchProfiles", { query: query.value.trim(), top_k: 20 }));
    if (!response) return;
    const hits = response.hits || [];
    results.append(hits.length ? table(["Profile", "Name", "Revision", "Score", ""], hits.map((hit) =>
      h("tr", { class: "profile-hit" }, h("td", {}, `${short(hit.profile.entity_type, "ENTITY_TYPE_")} ${hit.profile.entity_id}`),
        h("td", {}, hit.profile.name || ""), h("td", {}, hit.profile.revision || 0), h("td", {}, (hit.score || 0).toFixed(3)),
        h("td", {}, button("Open", () => showProfile(detail, hit.profile.entity_type, hit.profile.entity_id, hit.profile.scope))))))
      : empty("No profile matches."));
  });
  panel.replaceChildren(h("h2", {}, "Profiles"),
    h("p", { class: "muted" }, "Search them, or open a subject from the events."), search, results, detail);
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
