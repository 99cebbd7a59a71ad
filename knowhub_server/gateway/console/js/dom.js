// Small helpers to build the pages from data. Text always goes in as text nodes, never
// as HTML, so nothing a record holds can run as markup.

// h("a", {href: "#/x", class: "link", onclick: fn}, "text", child, [more children])
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "value" || name === "checked" || name === "disabled" || name === "selected") {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

// Proto3 JSON sends 64-bit integers as strings and leaves out zero values.
export function num(value) {
  return Number(value || 0);
}

// A time in the browser's zone, with the zone named: "26/11/2026, 23:40:12 UTC".
export function when(timestamp) {
  if (!timestamp) return "—";
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? String(timestamp) : date.toLocaleString(undefined, { timeZoneName: "short" });
}

export function badge(text, kind = text) {
  return h("span", { class: `badge badge-${String(kind).toLowerCase()}` }, text);
}

export function errorBox(error) {
  const code = error && error.code ? error.code : "ERROR";
  const message = error && error.message ? error.message : String(error);
  return h("div", { class: "error", role: "alert" }, h("strong", {}, code), ": ", message);
}

// Runs `action` and shows its error (if any) in `slot`, replacing what was there.
export async function guarded(slot, action) {
  slot.replaceChildren();
  try {
    return await action();
  } catch (error) {
    slot.replaceChildren(errorBox(error));
    return undefined;
  }
}

export function loading(text = "Loading…") {
  return h("p", { class: "muted loading" }, text);
}

export function empty(text) {
  return h("p", { class: "muted empty" }, text);
}

// <dl> of [label, value] pairs; pairs with an undefined value are left out.
export function fields(pairs) {
  return h("dl", { class: "fields" },
    pairs.filter(([, value]) => value !== undefined).map(([label, value]) =>
      [h("dt", {}, label), h("dd", {}, value === "" || value === null ? "—" : value)]));
}

export function table(headers, rows, attrs = {}) {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, headers.map((title) => h("th", {}, title)))),
    h("tbody", {}, rows));
}

export function pre(text, attrs = {}) {
  return h("pre", attrs, text || "");
}

export function json(value) {
  return pre(JSON.stringify(value, null, 2), { class: "json" });
}

export function link(hash, text) {
  return h("a", { href: hash }, text);
}

export function tags(map) {
  const entries = Object.entries(map || {});
  return entries.length ? entries.map(([key, value]) => h("span", { class: "tag" }, `${key}: ${value}`)) : "—";
}

export function list(values) {
  return values && values.length ? values.join(", ") : "—";
}

export function section(title, ...children) {
  return h("section", { class: "panel" }, h("h2", {}, title), children);
}

export function button(text, onclick, attrs = {}) {
  return h("button", { type: "button", ...attrs, onclick }, text);
}
