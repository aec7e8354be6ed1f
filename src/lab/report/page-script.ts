// The report page's own script (runs in the browser): draws the charts from the embedded data with Chart.js,
// labels every point directly (placing labels so they neither overlap nor leave the plot), fits every axis to
// its data, and records in the DOM what it drew and where each label went, for the Chromium test.
export const REPORT_SCRIPT = String.raw`
(function () {
  var data = JSON.parse(document.getElementById("lab-data").textContent);
  // Distinct colours (Tableau 10 first, then six more) so no two rows share one; with direct labels no colour has
  // to be matched to a legend.
  var palette = ["#4e79a7","#f28e2b","#e15759","#76b7b2","#59a14f","#edc948","#b07aa1","#ff9da7","#9c755f","#6b6b6b","#1b9e77","#d95f02","#17becf","#7f3c8d","#a0522d","#2f4b7c"];
  var colorOf = {};
  data.totals.forEach(function (t, i) { colorOf[t.info.id] = palette[i % palette.length]; });
  Chart.defaults.animation = false;
  Chart.defaults.font.size = 11;
  Chart.defaults.maintainAspectRatio = false;
  var charts = {};
  var MARKED = { compaction: 1, fold: 1, truncation: 1, prune: 1, checkpoint: 1 };

  function esc(text) { return String(text).replace(/[&<>"']/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]; }); }
  function pct(x) { return Math.round(x * 1000) / 10; }

  /** A round tick step for a span: 1, 2 or 5 times a power of ten, about five ticks. */
  function niceStep(span) {
    var raw = span / 5, power = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / power;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
  }

  /** An axis range that fits the values with some room, on round ticks, never past the given bounds. */
  function fit(values, floor, ceil, minSpan) {
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
    var mid = (lo + hi) / 2, span = Math.max(hi - lo, minSpan) * 1.2;
    var step = niceStep(span);
    var min = Math.floor((Math.min(lo, mid - span / 2)) / step) * step, max = Math.ceil((Math.max(hi, mid + span / 2)) / step) * step;
    if (floor !== null && min < floor) min = floor;
    if (ceil !== null && max > ceil) max = ceil;
    return { min: min, max: max };
  }

  function overlaps(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }

  // Direct labels for scatter points: try positions around each point; keep the first that stays inside the
  // plot and clear of other labels and points; record the boxes on the canvas for tests.
  var pointLabels = {
    id: "pointLabels",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx, area = chart.chartArea, placed = [], points = [];
      ctx.save();
      ctx.font = "600 11px system-ui, sans-serif";
      chart.data.datasets.forEach(function (ds, i) {
        var meta = chart.getDatasetMeta(i);
        if (meta.hidden) return;
        meta.data.forEach(function (el) { points.push({ x: el.x - 6, y: el.y - 6, w: 12, h: 12 }); });
      });
      chart.data.datasets.forEach(function (ds, i) {
        var meta = chart.getDatasetMeta(i);
        if (meta.hidden) return;
        meta.data.forEach(function (el) {
          var text = ds.label, w = ctx.measureText(text).width + 4, h = 14;
          // Right, left, above, below and the diagonals, at growing distances.
          var spots = [];
          [0, 10, 22, 36, 52, 70].forEach(function (d) {
            spots.push([9 + d, -h / 2], [-9 - w - d, -h / 2], [-w / 2, -h - 8 - d], [-w / 2, 8 + d], [9 + d, -h - 4 - d], [9 + d, 4 + d], [-9 - w - d, -h - 4 - d], [-9 - w - d, 4 + d]);
          });
          var best = null, bestScore = Infinity;
          for (var s = 0; s < spots.length; s++) {
            var box = { x: el.x + spots[s][0], y: el.y + spots[s][1], w: w, h: h };
            var score = 0;
            if (box.x < area.left || box.x + box.w > area.right || box.y < area.top || box.y + box.h > area.bottom) score += 1000;
            placed.forEach(function (p) { if (overlaps(box, p)) score += 100; });
            points.forEach(function (p) { if (overlaps(box, p)) score += 10; });
            score += s * 0.01;
            if (score < bestScore) { bestScore = score; best = box; }
            if (score < 1) break;
          }
          // A label that had to move away from its point gets a leader line.
          if (Math.abs(best.x + best.w / 2 - el.x) > best.w / 2 + 12 || Math.abs(best.y + best.h / 2 - el.y) > 20) {
            ctx.strokeStyle = "#9aa1ad"; ctx.lineWidth = 1; ctx.beginPath(); ctx.moveTo(el.x, el.y);
            ctx.lineTo(Math.max(best.x, Math.min(el.x, best.x + best.w)), Math.max(best.y, Math.min(el.y, best.y + best.h))); ctx.stroke();
          }
          ctx.fillStyle = "rgba(255,255,255,0.85)"; ctx.fillRect(best.x, best.y, best.w, best.h);
          ctx.fillStyle = ds.borderColor || "#222"; ctx.textBaseline = "middle";
          ctx.fillText(text, best.x + 2, best.y + h / 2);
          placed.push({ x: best.x, y: best.y, w: best.w, h: best.h, text: text });
        });
      });
      ctx.restore();
      chart.canvas.setAttribute("data-labels", JSON.stringify(placed.map(function (p) {
        return { text: p.text, x: Math.round(p.x), y: Math.round(p.y), w: Math.round(p.w), h: p.h };
      })));
      chart.canvas.setAttribute("data-area", JSON.stringify({ left: Math.round(area.left), top: Math.round(area.top), right: Math.round(area.right), bottom: Math.round(area.bottom) }));
    }
  };

  // Value labels at the end of horizontal bars.
  var barValues = {
    id: "barValues",
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      ctx.save(); ctx.font = "600 11px system-ui, sans-serif"; ctx.fillStyle = "#1d2330"; ctx.textBaseline = "middle";
      chart.getDatasetMeta(0).data.forEach(function (el, j) { ctx.fillText(chart.data.datasets[0].data[j].toFixed(1), el.x + 4, el.y); });
      ctx.restore();
    }
  };

  function scatter(id, rows, xOf, yOf, xTitle, yTitle, yBounds, tip) {
    var xs = rows.map(xOf), ys = rows.map(yOf);
    var xr = fit(xs, 0, null, Math.max(0.5, Math.max.apply(null, xs) * 0.1)), yr = fit(ys, yBounds[0], yBounds[1], 4);
    return new Chart(document.getElementById(id), {
      type: "scatter",
      data: { datasets: rows.map(function (t) {
        var ours = t.info.family === "ours";
        return { label: t.info.label, borderColor: colorOf[t.info.id], backgroundColor: ours ? colorOf[t.info.id] : "#ffffff",
          borderWidth: 2, pointRadius: 6, pointStyle: ours ? "circle" : "rectRot", data: [{ x: xOf(t), y: yOf(t) }] };
      }) },
      options: {
        layout: { padding: { top: 6, right: 12 } },
        scales: { x: { min: xr.min, max: xr.max, title: { display: true, text: xTitle } }, y: { min: yr.min, max: yr.max, title: { display: true, text: yTitle } } },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: function (c) { return c.dataset.label + ": " + tip(c.raw); } } } }
      },
      plugins: [pointLabels]
    });
  }

  // The recommendation's scores.
  var rec = data.recommendation;
  if (rec && rec.candidates && rec.candidates.length) {
    var ranked = rec.candidates.filter(function (c) { return !c.excluded; });
    charts.scores = new Chart(document.getElementById("chart-scores"), {
      type: "bar",
      data: { labels: ranked.map(function (c) { return c.label; }), datasets: [{ label: "score", data: ranked.map(function (c) { return Math.round(c.score * 10) / 10; }),
        backgroundColor: ranked.map(function (c) { return colorOf[c.id]; }) }] },
      options: { indexAxis: "y", layout: { padding: { right: 40 } },
        scales: { x: { min: 0, max: 100, title: { display: true, text: "score (0-100) at the stated weights" } } },
        plugins: { legend: { display: false } } },
      plugins: [barValues]
    });
  }

  var measured = data.totals.filter(function (t) { return t.neededLater.needed > 0; });
  if (measured.length) {
    // The recommendation's quality: the lower of needed later and the working set.
    charts.needed = scatter("chart-needed", measured, function (t) { return Math.round(t.cost.usd * 100) / 100; }, function (t) { return pct(Math.min(t.neededLater.share, t.workingSet.share)); },
      "estimated cost ($, all sessions)", "quality: the lower of needed later and working set (%)", [0, 100], function (r) { return r.y + "% at $" + r.x; });
  }
  charts.cache = scatter("chart-cache", data.totals, function (t) { return Math.round(t.cost.usd * 100) / 100; }, function (t) { return pct(t.cache.reuse); },
    "estimated cost ($, all sessions)", "cache reuse (% of prompt tokens)", [0, 100], function (r) { return r.y + "% reuse at $" + r.x; });

  // Per session: one small panel per row, each titled, with the window and the threshold drawn and named.
  var windowLines = {
    id: "windowLines",
    afterDatasetsDraw: function (chart) {
      var y = chart.scales.y, area = chart.chartArea, ctx = chart.ctx, lines = chart.options.windowLines || [];
      ctx.save(); ctx.font = "10px system-ui, sans-serif"; ctx.textBaseline = "bottom";
      lines.forEach(function (l) {
        if (l.value > y.max || l.value < y.min) return;
        var py = y.getPixelForValue(l.value);
        ctx.strokeStyle = l.color; ctx.setLineDash(l.dash); ctx.lineWidth = 1; ctx.beginPath(); ctx.moveTo(area.left, py); ctx.lineTo(area.right, py); ctx.stroke();
        // The window is named on the right, the threshold on the left, so the two names never collide.
        ctx.setLineDash([]); ctx.fillStyle = l.color; ctx.textAlign = l.align; ctx.fillText(l.label, l.align === "right" ? area.right - 2 : area.left + 4, py - 1);
      });
      ctx.restore();
    }
  };

  function panel(holder, session, row, index) {
    var card = document.createElement("div");
    card.className = "panel";
    var peak = row.peakTokens;
    card.innerHTML = "<h4><span class=\"swatch\" style=\"background:" + colorOf[row.info.id] + "\"></span>" + esc(row.info.label) +
      " <span class=\"muted\">peak " + Math.round(peak / 100) / 10 + "k · " + row.compactions + " acts" + (row.overWindow ? " · " + row.overWindow + " over the window" : "") + "</span></h4><div class=\"box\"><canvas></canvas></div>";
    holder.appendChild(card);
    var marks = {};
    row.actions.forEach(function (a) { if (MARKED[a.kind]) marks[a.request] = true; });
    var points = row.series.map(function (p) { return { x: p[0], y: p[1] }; });
    Object.keys(marks).forEach(function (k) {
      var i = Number(k);
      if (!points.some(function (p) { return p.x === i; })) {
        var a = row.actions.find(function (x) { return x.request === i; });
        points.push({ x: i, y: a.tokensAfter });
      }
    });
    points.sort(function (a, b) { return a.x - b.x; });
    var w = data.settings.window, t = data.settings.window - data.settings.reserve;
    var chart = new Chart(card.querySelector("canvas"), {
      type: "line",
      data: { datasets: [{ label: row.info.label, data: points, borderColor: colorOf[row.info.id], backgroundColor: colorOf[row.info.id], borderWidth: 1.5, tension: 0,
        pointRadius: points.map(function (p) { return marks[p.x] ? 3 : 0; }), pointStyle: "triangle" }] },
      options: { parsing: false, normalized: true,
        windowLines: [{ value: w, label: "window " + Math.round(w / 1000) + "k", color: "#6b7280", dash: [6, 4], align: "right" }, { value: t, label: "compaction threshold", color: "#8a919c", dash: [2, 3], align: "left" }],
        scales: { x: { type: "linear", min: 0, max: Math.max(1, session.requests - 1), title: { display: true, text: "request" } },
          y: { min: 0, max: Math.ceil(Math.max(w, peak) * 1.05 / niceStep(Math.max(w, peak))) * niceStep(Math.max(w, peak)), title: { display: true, text: "context tokens" } } },
        plugins: { legend: { display: false } } },
      plugins: [windowLines]
    });
    charts["context-" + index] = chart;
  }

  function showSession(i) {
    var session = data.sessions[i];
    Object.keys(charts).forEach(function (k) { if (k.indexOf("context-") === 0) { charts[k].destroy(); delete charts[k]; } });
    var holder = document.getElementById("context-panels");
    holder.innerHTML = "";
    session.rows.forEach(function (row, r) { panel(holder, session, row, r); });
    var tpl = document.getElementById("session-tables").content.querySelector('[data-session="' + i + '"]');
    document.getElementById("session-table").innerHTML = tpl ? tpl.innerHTML : "";
  }

  var select = document.getElementById("session-select");
  select.addEventListener("change", function (e) { showSession(Number(e.target.value)); });
  // Start on the longest session: it shows the most acts.
  var longest = 0;
  data.sessions.forEach(function (s, i) { if (s.requests > data.sessions[longest].requests) longest = i; });
  if (data.sessions.length) { select.value = String(longest); showSession(longest); }

  // Tell tests what drew: a chart counts when its canvas has ink and its datasets have points.
  var drawn = 0, names = [];
  Object.keys(charts).forEach(function (name) {
    var chart = charts[name];
    var canvas = chart.canvas, ctx = canvas.getContext("2d");
    var pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data, ink = 0;
    for (var p = 3; p < pixels.length; p += 4) if (pixels[p] !== 0) { ink++; if (ink > 50) break; }
    var count = chart.data.datasets.reduce(function (s, d) { return s + d.data.length; }, 0);
    if (ink > 50 && count > 0) { drawn++; names.push(name); }
  });
  document.documentElement.setAttribute("data-rendered", String(drawn));
  document.documentElement.setAttribute("data-charts", names.join(","));
})();
`;
