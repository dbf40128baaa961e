// A small force-directed graph on a canvas: records and files as nodes, each labelled with a
// short title; supersession edges carry an arrowhead (newer → older), file links are dashed;
// drag to pan, wheel to zoom, click a node to open it. No library.
"use strict";

(function () {
  const COLORS = { decision: "#2c6ecb", convention: "#2e7d32", preference: "#8e44ad",
    discovery: "#b7791f", bugfix: "#c0392b", handover: "#16a085", profile: "#7f8c8d",
    superseded: "#bbb", file: "#95a5a6" };
  const LABEL_CHARS = 28; // a node's label: the start of its title (a file: its name)

  function shortLabel(node) {
    const text = node.kind === "file" ? node.title.split("/").filter(Boolean).pop() || node.title
      : node.title;
    return text.length > LABEL_CHARS ? text.slice(0, LABEL_CHARS - 1).trimEnd() + "…" : text;
  }

  // An arrowhead at ``b``, on the line from ``a``, stopping at the node's edge.
  function arrow(ctx, a, b, k) {
    const dx = b.x - a.x, dy = b.y - a.y;
    const d = Math.sqrt(dx * dx + dy * dy) || 1;
    const ux = dx / d, uy = dy / d;
    const tipX = b.x - ux * 6, tipY = b.y - uy * 6, size = 6 / Math.max(k, 0.5);
    ctx.beginPath();
    ctx.moveTo(tipX, tipY);
    ctx.lineTo(tipX - ux * size - uy * size * 0.5, tipY - uy * size + ux * size * 0.5);
    ctx.lineTo(tipX - ux * size + uy * size * 0.5, tipY - uy * size - ux * size * 0.5);
    ctx.closePath();
    ctx.fill();
  }
  let current = null; // the graph on screen: stop its animation before drawing another

  function layout(nodes, edges, width, height) {
    const index = new Map(nodes.map((n, i) => [n.id, i]));
    const links = edges.map((e) => [index.get(e.from), index.get(e.to)]);
    nodes.forEach((n, i) => {
      const angle = i * 2.399963; // the golden angle spreads the start evenly
      const radius = 12 * Math.sqrt(i + 1);
      n.x = width / 2 + radius * Math.cos(angle);
      n.y = height / 2 + radius * Math.sin(angle);
      n.vx = 0; n.vy = 0;
    });
    return links;
  }

  function tick(nodes, links, width, height) {
    const n = nodes.length;
    for (let i = 0; i < n; i++) {
      const a = nodes[i];
      for (let j = i + 1; j < n; j++) {
        const b = nodes[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        let d2 = dx * dx + dy * dy;
        if (d2 > 90000) continue; // far apart: no repulsion worth computing
        if (d2 < 1) { dx = Math.random() - 0.5; dy = Math.random() - 0.5; d2 = 1; }
        const f = 600 / d2;
        a.vx += dx * f; a.vy += dy * f; b.vx -= dx * f; b.vy -= dy * f;
      }
    }
    for (const [s, t] of links) {
      const a = nodes[s], b = nodes[t];
      const dx = b.x - a.x, dy = b.y - a.y;
      const d = Math.sqrt(dx * dx + dy * dy) || 1;
      const f = (d - 30) * 0.05 / d;
      a.vx += dx * f; a.vy += dy * f; b.vx -= dx * f; b.vy -= dy * f;
    }
    let moved = 0;
    for (const node of nodes) {
      node.vx += (width / 2 - node.x) * 0.01;
      node.vy += (height / 2 - node.y) * 0.01;
      node.vx *= 0.6; node.vy *= 0.6;
      node.x += node.vx; node.y += node.vy;
      moved += Math.abs(node.vx) + Math.abs(node.vy);
    }
    return moved / Math.max(1, n);
  }

  function draw(canvas, data, onClick) {
    if (current) current.stop();
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 1000, height = canvas.clientHeight || 640;
    canvas.width = width * ratio; canvas.height = height * ratio;
    const ctx = canvas.getContext("2d");
    const nodes = data.nodes.map((n) => ({ ...n }));
    const links = layout(nodes, data.edges, width, height);
    const view = { x: 0, y: 0, k: 1 };
    let hover = null, frame = 0, alive = true, steps = 0, touched = false;

    function paint() {
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, width, height);
      ctx.translate(view.x, view.y); ctx.scale(view.k, view.k);
      const style = getComputedStyle(document.body);
      ctx.lineWidth = 1 / view.k;
      data.edges.forEach((e, i) => {
        const [s, t] = links[i];
        const a = nodes[s], b = nodes[t];
        ctx.strokeStyle = e.rel === "supersedes" ? "#888" : "rgba(128,128,128,.45)";
        ctx.setLineDash(e.rel === "supersedes" ? [] : [3 / view.k, 3 / view.k]);
        ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
        if (e.rel === "supersedes") { ctx.fillStyle = "#888"; arrow(ctx, a, b, view.k); }
      });
      ctx.setLineDash([]);
      for (const node of nodes) {
        ctx.beginPath();
        if (node.kind === "file") {
          ctx.fillStyle = COLORS.file;
          ctx.rect(node.x - 4, node.y - 4, 8, 8);
        } else {
          ctx.fillStyle = node.current ? (COLORS[node.type] || "#555") : COLORS.superseded;
          ctx.arc(node.x, node.y, 5, 0, Math.PI * 2);
        }
        ctx.fill();
      }
      ctx.fillStyle = style.color;
      ctx.font = `${11 / view.k}px system-ui, sans-serif`;
      for (const node of nodes) { // every node labelled; the one under the pointer in full
        const label = node === hover ? node.title : shortLabel(node);
        ctx.fillText(label, node.x + 8 / view.k, node.y + 4 / view.k);
      }
    }

    function fit() {
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const node of nodes) {
        x0 = Math.min(x0, node.x); y0 = Math.min(y0, node.y);
        x1 = Math.max(x1, node.x); y1 = Math.max(y1, node.y);
      }
      const k = Math.min(4, 0.9 * Math.min(width / Math.max(1, x1 - x0), height / Math.max(1, y1 - y0)));
      view.k = k;
      view.x = width / 2 - k * (x0 + x1) / 2;
      view.y = height / 2 - k * (y0 + y1) / 2;
    }

    function animate() {
      if (!alive) return;
      const moved = tick(nodes, links, width, height);
      steps += 1;
      if (!touched && steps % 10 === 0) fit();
      paint();
      if (moved > 0.05 && steps < 600) frame = requestAnimationFrame(animate);
    }

    function at(event) {
      const box = canvas.getBoundingClientRect();
      const x = (event.clientX - box.left - view.x) / view.k;
      const y = (event.clientY - box.top - view.y) / view.k;
      let best = null, bestD = 100 / (view.k * view.k);
      for (const node of nodes) {
        const d = (node.x - x) ** 2 + (node.y - y) ** 2;
        if (d < bestD) { best = node; bestD = d; }
      }
      return best;
    }

    let drag = null;
    const down = (e) => { touched = true; drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false }; canvas.setPointerCapture(e.pointerId); };
    const move = (e) => {
      if (drag) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        view.x = drag.vx + dx; view.y = drag.vy + dy; paint();
      } else {
        const found = at(e);
        if (found !== hover) { hover = found; canvas.style.cursor = found ? "pointer" : "grab"; paint(); }
      }
    };
    const up = (e) => {
      if (drag && !drag.moved) { const found = at(e); if (found) onClick(found); }
      drag = null;
    };
    const wheel = (e) => {
      e.preventDefault();
      touched = true;
      const box = canvas.getBoundingClientRect();
      const mx = e.clientX - box.left, my = e.clientY - box.top;
      const k = Math.min(8, Math.max(0.2, view.k * Math.exp(-e.deltaY * 0.0015)));
      view.x = mx - (mx - view.x) * (k / view.k); view.y = my - (my - view.y) * (k / view.k);
      view.k = k; paint();
    };
    canvas.addEventListener("pointerdown", down);
    canvas.addEventListener("pointermove", move);
    canvas.addEventListener("pointerup", up);
    canvas.addEventListener("wheel", wheel, { passive: false });
    current = {
      stop() {
        alive = false; cancelAnimationFrame(frame);
        canvas.removeEventListener("pointerdown", down); canvas.removeEventListener("pointermove", move);
        canvas.removeEventListener("pointerup", up); canvas.removeEventListener("wheel", wheel);
      },
      nodes,
      labels: () => nodes.map(shortLabel),
      // Where a node is on screen (client coordinates), for a click.
      screenOf(id) {
        const node = nodes.find((n) => n.id === id);
        if (!node) return null;
        const box = canvas.getBoundingClientRect();
        return { x: box.left + view.x + node.x * view.k, y: box.top + view.y + node.y * view.k };
      },
    };
    if (!nodes.length) {
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0); ctx.clearRect(0, 0, width, height);
      ctx.fillStyle = getComputedStyle(document.body).color;
      ctx.fillText("No chains or file links in this project yet.", 20, 30);
      return current;
    }
    // Most of the layout before the first paint (a few hundred ms at most), the rest animated.
    const started = performance.now();
    while (steps < 300 && performance.now() - started < 400) {
      steps += 1;
      if (tick(nodes, links, width, height) < 0.05) break;
    }
    fit();
    animate();
    return current;
  }

  window.AgentctxGraph = { draw, shown: () => current, COLORS };
})();
