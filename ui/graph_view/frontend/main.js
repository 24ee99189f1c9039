// The plan graph component: lays out the DOT with Graphviz (wasm), then pans, zooms and selects.
//
// It speaks Streamlit's component protocol (v1) by hand: it posts componentReady, receives
// "streamlit:render" with the Python arguments (dot, selected, height, labels, live), and posts
// setComponentValue ({step, nonce} for a step, {phase, nonce} for a phase's node or cluster:
// the nonce makes a second click on the same node a new value) and setFrameHeight. A phase
// folds and unfolds in Python: a click reports it, and the next DOT draws it the other way.
import { Graphviz } from "./hpcc-wasm-graphviz.js";

const MIN_TEXT_PX = 11; // the first view never draws text smaller than this
const MAX_TEXT_PX = 15; // nor blows a small plan up past this
const STEP_PREFIX = "step-"; // core.plan.graph.step_node_id
const PHASE_PREFIX = "phase-"; // core.plan.graph.phase_node_id
const CHOOSABLE = "g.node.selectable, g.cluster.selectable";
const ZOOM_STEP = 1.25;
const DRAG_PX = 4; // a pointer that moved less than this clicked

const bar = document.getElementById("bar");
const view = document.getElementById("view");
const canvas = document.getElementById("canvas");
const zoomText = document.getElementById("zoom");
const hint = document.getElementById("hint");

const loading = Graphviz.load(); // the wasm compiles while Streamlit sends the first render
let graphviz = null;
let args = {};
let svg = null;
let size = { w: 1, h: 1 }; // the SVG's own units (Graphviz points)
let smallestFont = 10; // the smallest font-size in the SVG, in its units
let scale = 1; // CSS px per SVG unit
// how the scale is chosen: "readable" (the first view), "fit" (the whole graph, asked for
// with the fit button) or "kept" (the person zoomed or panned). A new drawing, a resize of
// the frame (which a new scale itself causes) or a new plan version keep the mode, so
// "fit" stays fitted instead of snapping back to the readable scale.
let mode = "readable";
let clicks = 0;
let drawnNodes = new Set(); // the step nodes of the previous drawing

function post(type, data) {
  window.parent.postMessage({ isStreamlitMessage: true, type, ...data }, "*");
}

// The scale that shows the whole drawing: its width in the view, its height in the frame,
// which may grow up to args.height (fit to that, not to today's view).
function wholeScale() {
  const most = (args.height || 460) - bar.offsetHeight - 4 - 12;
  return Math.min((view.clientWidth - 10) / size.w, (most - 10) / size.h);
}

// The first view: the whole drawing when its text stays readable, else as much of it as
// readable text allows (the rest is a scroll away, and the hint says so).
function readableScale() {
  const lowest = MIN_TEXT_PX / smallestFont;
  return Math.min(Math.max(wholeScale(), lowest), MAX_TEXT_PX / smallestFont);
}

function fitScale() {
  return Math.min(wholeScale(), MAX_TEXT_PX / smallestFont);
}

function chosenScale() {
  if (mode === "fit") return fitScale();
  return mode === "kept" ? scale : readableScale();
}

// Scroll the view just enough that ``node`` lies wholly inside it (when it can).
function reveal(node) {
  const box = node.getBoundingClientRect();
  const area = view.getBoundingClientRect();
  const right = area.left + view.clientLeft + view.clientWidth;
  const bottom = area.top + view.clientTop + view.clientHeight;
  if (box.left < area.left) view.scrollLeft -= area.left - box.left + 8;
  else if (box.right > right) view.scrollLeft += box.right - right + 8;
  if (box.top < area.top) view.scrollTop -= area.top - box.top + 8;
  else if (box.bottom > bottom) view.scrollTop += box.bottom - bottom + 8;
}

function resizeFrame() {
  const wanted = size.h * scale + 12 + (view.scrollWidth > view.clientWidth ? 14 : 0);
  const height = Math.max(120, Math.min(args.height || 460, bar.offsetHeight + wanted));
  view.style.height = `${height - bar.offsetHeight - 4}px`;
  post("streamlit:setFrameHeight", { height });
}

function setScale(next, anchor) {
  const old = scale;
  scale = Math.min(Math.max(next, 0.05), 8);
  const x = anchor ? anchor.x : view.clientWidth / 2;
  const y = anchor ? anchor.y : view.clientHeight / 2;
  const left = (view.scrollLeft + x) * (scale / old) - x;
  const top = (view.scrollTop + y) * (scale / old) - y;
  svg.setAttribute("width", `${size.w * scale}px`);
  svg.setAttribute("height", `${size.h * scale}px`);
  zoomText.textContent = `${Math.round(scale * 100)}%`;
  resizeFrame();
  view.scrollLeft = left;
  view.scrollTop = top;
  // scrollbars may be hidden overlays: say in words that there is more to see
  const more = view.scrollWidth > view.clientWidth + 1 || view.scrollHeight > view.clientHeight + 1;
  hint.textContent = more ? args.labels?.hint || "" : "";
}

let shownSelected = null;
function markSelected() {
  for (const node of canvas.querySelectorAll("g.node")) {
    node.classList.toggle("selected", node.id === STEP_PREFIX + args.selected);
  }
  if (args.selected && args.selected !== shownSelected) {
    const node = canvas.querySelector(`g.node#${CSS.escape(STEP_PREFIX + args.selected)}`);
    if (node) reveal(node); // a step chosen elsewhere (the table, the panel) comes into sight
  }
  shownSelected = args.selected || null;
}

function choose(node) {
  clicks += 1;
  const nonce = `${Date.now()}-${clicks}`;
  if (node.id.startsWith(PHASE_PREFIX)) { // fold or unfold: Python draws it the other way
    const value = { phase: node.id.slice(PHASE_PREFIX.length), nonce };
    post("streamlit:setComponentValue", { value, dataType: "json" });
    return;
  }
  args.selected = node.id.slice(STEP_PREFIX.length);
  markSelected();
  const value = { step: args.selected, nonce };
  post("streamlit:setComponentValue", { value, dataType: "json" });
}

function prepare(drawing) {
  const [, , w, h] = drawing.getAttribute("viewBox").split(/[ ,]+/).map(Number);
  size = { w, h };
  const texts = [...drawing.querySelectorAll("text")];
  const fonts = texts.map((t) => Number(t.getAttribute("font-size")));
  smallestFont = Math.min(...fonts.filter((f) => f > 0), 14);
  for (const node of drawing.querySelectorAll("g.node, g.cluster")) {
    node.querySelector("title")?.remove(); // the raw node name would pop up as a tooltip
    if (!node.id.startsWith(STEP_PREFIX) && !node.id.startsWith(PHASE_PREFIX)) continue;
    node.classList.add("selectable");
    node.setAttribute("tabindex", "0");
    node.setAttribute("role", "button");
    const words = [...node.querySelectorAll("text")].map((t) => t.textContent);
    node.setAttribute("aria-label", words.join(" "));
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(node); }
    });
  }
}

function draw() {
  let text;
  try {
    text = graphviz.layout(args.dot, "svg", "dot");
  } catch (error) {
    canvas.innerHTML = `<div id="error"></div>`;
    canvas.firstChild.textContent = String(error);
    svg = null;
    return;
  }
  const left = view.scrollLeft;
  const top = view.scrollTop;
  canvas.innerHTML = text.slice(text.indexOf("<svg"));
  svg = canvas.querySelector("svg");
  prepare(svg);
  const next = chosenScale();
  scale = next;
  setScale(next, { x: 0, y: 0 });
  if (mode === "kept") { view.scrollLeft = left; view.scrollTop = top; }
  const nodes = [...canvas.querySelectorAll("g.node.selectable")];
  const added = drawnNodes.size ? nodes.filter((node) => !drawnNodes.has(node.id)) : [];
  drawnNodes = new Set(nodes.map((node) => node.id));
  if (added.length) reveal(added[added.length - 1]); // a new step comes into sight
}

let drawnDot = null;
window.addEventListener("message", async (event) => {
  if (event.data?.type !== "streamlit:render") return;
  args = event.data.args;
  document.body.style.color = event.data.theme?.textColor || "";
  graphviz = await loading;
  if (args.dot !== drawnDot) {
    drawnDot = args.dot;
    draw();
  }
  if (svg) markSelected();
  follow(args.live);
  paintLive();
  const labels = args.labels || {};
  for (const id of ["zoom-in", "zoom-out", "fit"]) {
    document.getElementById(id).title = labels[id] || "";
  }
  view.title = labels.hint || "";
});

// A followed run's step marks, pushed by the server (ui.live_marks): each change is painted
// on the drawn nodes (status mark and fill) at once; the next DOT from the page, drawn by
// its tick, then shows the same. ``args.live``: {feed, seq, icons, fills}, or none.
const RETRY_MS = 10000;  // a stream that failed (no route, a server restarting) is tried again
let live = { feed: null, source: null, last: null, retryAt: 0 };

function follow(wanted) {
  const feed = wanted?.feed || null;
  if (feed === live.feed && (live.source || !feed || Date.now() < live.retryAt)) return;
  live.source?.close();
  live = { feed, source: null, last: feed === live.feed ? live.last : null, retryAt: 0 };
  if (!feed) return;
  const source = live.source = new EventSource(feed);
  source.onmessage = (event) => {
    const marks = JSON.parse(event.data);
    if (live.last && marks.seq < live.last.seq) return;
    live.last = marks;
    paintLive();
    if (marks.settled) { source.close(); live.source = null; }
  };
  // The browser reopens a broken stream by itself, unless the server answered with an
  // error or not a stream (served without app.py): then the tick alone draws the marks
  // until a drawing after RETRY_MS tries again.
  source.onerror = () => {
    if (source.readyState !== EventSource.CLOSED || live.source !== source) return;
    source.onmessage = null;
    live.source = null;
    live.retryAt = Date.now() + RETRY_MS;
  };
}

function paintLive() {
  const marks = live.last;
  const drawn = args.live;
  if (!svg || !marks || !drawn || marks.seq <= drawn.seq) return;
  const icons = Object.values(drawn.icons);
  for (const [step, status] of Object.entries(marks.steps)) {
    const node = svg.getElementById(STEP_PREFIX + step);
    if (!node || !Object.hasOwn(drawn.icons, status)) continue;
    const head = node.querySelector("text");
    const at = head ? [...head.textContent].findIndex((c) => icons.includes(c)) : -1;
    if (at >= 0) {
      const chars = [...head.textContent];
      chars[at] = drawn.icons[status];
      head.textContent = chars.join("");
    }
    node.querySelector("path, polygon")?.setAttribute("fill", drawn.fills[status]);
  }
}

function zoomBy(factor) {
  mode = "kept";
  setScale(scale * factor);
}

document.getElementById("zoom-in").onclick = () => zoomBy(ZOOM_STEP);
document.getElementById("zoom-out").onclick = () => zoomBy(1 / ZOOM_STEP);
document.getElementById("fit").onclick = () => {
  // the whole graph in sight: the person asked for it, so text may go below MIN_TEXT_PX
  if (!svg) return;
  mode = "fit";
  setScale(fitScale(), { x: 0, y: 0 });
  view.scrollLeft = 0;
  view.scrollTop = 0;
};

// Ctrl (or ⌘) + wheel zooms, as does a trackpad pinch; a plain wheel scrolls, so that
// scrolling the page past the graph does not zoom it by surprise.
view.addEventListener("wheel", (event) => {
  if (!svg || !(event.ctrlKey || event.metaKey)) return;
  event.preventDefault();
  mode = "kept";
  const box = view.getBoundingClientRect();
  const anchor = { x: event.clientX - box.left, y: event.clientY - box.top };
  setScale(scale * Math.exp(-event.deltaY * 0.002), anchor);
}, { passive: false });

let drag = null;
view.addEventListener("pointerdown", (event) => {
  if (event.button !== 0) return;
  drag = { x: event.clientX, y: event.clientY, left: view.scrollLeft, top: view.scrollTop,
           moved: false, node: event.target.closest?.(CHOOSABLE) };
  view.setPointerCapture(event.pointerId);
});
view.addEventListener("pointermove", (event) => {
  if (!drag) return;
  const dx = event.clientX - drag.x;
  const dy = event.clientY - drag.y;
  if (!drag.moved && Math.hypot(dx, dy) < DRAG_PX) return;
  drag.moved = true;
  mode = "kept";
  view.classList.add("dragging");
  view.scrollLeft = drag.left - dx;
  view.scrollTop = drag.top - dy;
});
view.addEventListener("pointerup", () => {
  // pointer capture retargets the click to the view, so the node comes from pointerdown
  if (drag && !drag.moved && drag.node) choose(drag.node);
  drag = null;
  view.classList.remove("dragging");
});
view.addEventListener("pointercancel", () => { drag = null; view.classList.remove("dragging"); });

window.addEventListener("resize", () => { if (svg && mode !== "kept") setScale(chosenScale()); });

post("streamlit:componentReady", { apiVersion: 1 });
