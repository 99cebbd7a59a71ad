// Directed graphs drawn as SVG. The vendored dagre (vendor/dagre, from the npm registry)
// lays the nodes out in ranks and routes the edges, each edge's label beside its line; the
// nodes are focusable buttons that call `onSelect(id)`. The drawing zooms (the wheel, or
// + and −) and pans (drag the background); Fit shows it whole again. Text goes in as text
// nodes, never as markup.

import dagre from "../vendor/dagre/dagre.esm.js";
import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const TITLE_FONT = "600 13px system-ui, -apple-system, 'Segoe UI', sans-serif";
const LINE_FONT = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
const PAD = 10;
const MIN_WIDTH = 90;
const MAX_WIDTH = 240;
const MAX_HEIGHT = 600;
const ZOOM_STEP = 1.25;
const LABEL_OFFSET = 6;
let graphCount = 0;
let measure;

function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null && value !== false) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null && child !== false) element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

function textWidth(text, font) {
  measure ||= document.createElement("canvas").getContext("2d");
  measure.font = font;
  return measure.measureText(text).width;
}

// The text cut (with …) to `width` pixels.
function fit(text, font, width) {
  let value = String(text ?? "");
  if (textWidth(value, font) <= width) return value;
  while (value.length > 1 && textWidth(`${value}…`, font) > width) value = value.slice(0, -1);
  return `${value}…`;
}

// graph({nodes: [{id, title, lines, classes, tooltip}], edges: [{from, to, label, classes}],
//        rankdir: "TB" | "LR", name, selected, onSelect(id)}) -> <div class="graph-box">
export function graph({ nodes, edges, rankdir = "TB", name = "graph", selected, onSelect }) {
  const id = ++graphCount;
  const layout = new dagre.graphlib.Graph();
  layout.setGraph({ rankdir, nodesep: 26, ranksep: 44, edgesep: 14, marginx: 12, marginy: 12 });
  layout.setDefaultEdgeLabel(() => ({}));
  const boxes = new Map();
  for (const node of nodes) {
    const title = fit(node.title, TITLE_FONT, MAX_WIDTH - 2 * PAD);
    const lines = (node.lines || []).filter(Boolean).map((line) => fit(line, LINE_FONT, MAX_WIDTH - 2 * PAD));
    const width = Math.max(MIN_WIDTH, textWidth(title, TITLE_FONT), ...lines.map((line) => textWidth(line, LINE_FONT))) + 2 * PAD;
    boxes.set(node.id, { ...node, title, lines });
    layout.setNode(node.id, { width: Math.ceil(width), height: 26 + 15 * lines.length });
  }
  const drawn = edges.filter((edge) => boxes.has(edge.from) && boxes.has(edge.to));
  for (const edge of drawn) {
    const label = edge.label ? String(edge.label) : "";
    layout.setEdge(edge.from, edge.to, label ? { label, labelpos: "r", labeloffset: LABEL_OFFSET, width: textWidth(label, LINE_FONT) + 4, height: 14 } : {});
  }
  dagre.layout(layout);
  const size = layout.graph();
  const arrow = `graph-arrow-${id}`;
  const full = { x: 0, y: 0, w: Math.ceil(size.width), h: Math.ceil(size.height) };
  const picture = svg("svg", {
    class: `graph graph-${name}`, "data-graph": name, role: "group", "aria-label": name,
    viewBox: `0 0 ${full.w} ${full.h}`, width: "100%", height: Math.min(full.h, MAX_HEIGHT),
  }, svg("defs", {}, svg("marker", {
    id: arrow, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9,
    markerUnits: "userSpaceOnUse", orient: "auto-start-reverse",
  }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: "graph-arrow" }))));
  for (const edge of drawn) {
    const route = layout.edge(edge.from, edge.to);
    const path = route.points.map((point, index) => `${index ? "L" : "M"}${point.x.toFixed(1)},${point.y.toFixed(1)}`).join(" ");
    picture.append(svg("g", { class: `graph-edge ${edge.classes || ""}`, "data-from": edge.from, "data-to": edge.to },
      svg("path", { d: path, "marker-end": `url(#${arrow})` }),
      edge.label ? svg("text", { x: route.x, y: route.y + 4, "text-anchor": "middle", class: "graph-edge-label" }, String(edge.label)) : null));
  }
  const elements = new Map();
  const choose = (nodeId) => {
    for (const [key, element] of elements) element.classList.toggle("selected", key === nodeId);
    if (onSelect) onSelect(nodeId);
  };
  for (const [nodeId, box] of boxes) {
    const place = layout.node(nodeId);
    const element = svg("g", {
      class: `graph-node ${box.classes || ""}`, "data-node-id": nodeId, tabindex: 0, role: "button",
      transform: `translate(${(place.x - place.width / 2).toFixed(1)},${(place.y - place.height / 2).toFixed(1)})`,
    }, svg("title", {}, box.tooltip || box.title),
    svg("rect", { width: place.width, height: place.height, rx: 6 }),
    svg("text", { x: PAD, y: 17, class: "graph-node-title" }, box.title),
    box.lines.map((line, index) => svg("text", { x: PAD, y: 33 + 15 * index, class: "graph-node-line" }, line)));
    element.addEventListener("click", () => choose(nodeId));
    element.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        choose(nodeId);
      }
    });
    elements.set(nodeId, element);
    picture.append(element);
  }
  if (selected && elements.has(selected)) elements.get(selected).classList.add("selected");
  picture.style.maxWidth = `${full.w}px`;
  return h("div", { class: "graph-box" }, zoomable(picture, full), picture);
}

// Zoom and pan by changing the SVG's viewBox; returns the toolbar (+, −, Fit).
function zoomable(picture, full) {
  let view = { ...full };
  const show = () => picture.setAttribute("viewBox", [view.x, view.y, view.w, view.h].map((n) => n.toFixed(1)).join(" "));
  // Zooms by `factor` (> 1: in) around the point (fx, fy), as fractions of the view.
  const zoom = (factor, fx = 0.5, fy = 0.5) => {
    const w = Math.min(full.w * 4, Math.max(full.w / 20, view.w / factor));
    const h = view.h * (w / view.w);
    view = { x: view.x + (view.w - w) * fx, y: view.y + (view.h - h) * fy, w, h };
    show();
  };
  const scale = () => {
    const box = picture.getBoundingClientRect();
    return Math.max(view.w / (box.width || 1), view.h / (box.height || 1));
  };
  picture.addEventListener("wheel", (event) => {
    event.preventDefault();
    const box = picture.getBoundingClientRect();
    zoom(event.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, (event.clientX - box.left) / box.width, (event.clientY - box.top) / box.height);
  }, { passive: false });
  let drag = null;
  picture.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || event.target.closest(".graph-node")) return;
    drag = { x: event.clientX, y: event.clientY, view: { ...view }, scale: scale() };
    picture.setPointerCapture(event.pointerId);
    picture.classList.add("panning");
  });
  picture.addEventListener("pointermove", (event) => {
    if (!drag) return;
    view = { ...drag.view, x: drag.view.x - (event.clientX - drag.x) * drag.scale, y: drag.view.y - (event.clientY - drag.y) * drag.scale };
    show();
  });
  const stop = () => {
    drag = null;
    picture.classList.remove("panning");
  };
  picture.addEventListener("pointerup", stop);
  picture.addEventListener("pointercancel", stop);
  const tool = (text, title, action, cls) => h("button", { type: "button", title, class: cls, onclick: action }, text);
  return h("div", { class: "graph-tools" },
    tool("+", "zoom in", () => zoom(ZOOM_STEP), "zoom-in"), tool("−", "zoom out", () => zoom(1 / ZOOM_STEP), "zoom-out"),
    tool("Fit", "show the whole graph", () => { view = { ...full }; show(); }, "zoom-fit"),
    h("span", { class: "muted" }, "wheel to zoom, drag to pan"));
}
