// The report page's own script (runs in the browser): draws the charts from the embedded data with
// Chart.js and records in the DOM how many charts drew something.
export const REPORT_SCRIPT = String.raw`
(function () {
  var data = JSON.parse(document.getElementById("lab-data").textContent);
  var palette = ["#1f6feb","#e8590c","#2f9e44","#ae3ec9","#c09000","#0c8599","#e03131","#495057","#f783ac","#74b816","#5f3dc4","#862e9c"];
  var colorOf = {};
  data.totals.forEach(function (t, i) { colorOf[t.info.id] = palette[i % palette.length]; });
  Chart.defaults.animation = false;
  Chart.defaults.font.size = 11;
  var charts = {};
  var MARKED = { compaction: 1, fold: 1, truncation: 1, prune: 1 };

  function pointLabel(ctx) { return ctx.raw && ctx.raw.label ? ctx.raw.label : ""; }

  charts.retention = new Chart(document.getElementById("chart-retention"), {
    type: "scatter",
    data: { datasets: data.totals.map(function (t) {
      return { label: t.info.label, backgroundColor: colorOf[t.info.id], pointRadius: 6,
        data: [{ x: Math.round(t.meanTokens), y: Math.round(t.retention.share * 1000) / 10, label: t.info.label }] };
    }) },
    options: { scales: { x: { title: { display: true, text: "mean context tokens per request" } }, y: { min: 0, max: 100, title: { display: true, text: "probes kept at the end (%)" } } },
      plugins: { tooltip: { callbacks: { label: function (c) { return pointLabel(c) + ": " + c.raw.y + "% at " + c.raw.x + " tokens"; } } } } }
  });

  charts.cache = new Chart(document.getElementById("chart-cache"), {
    type: "scatter",
    data: { datasets: data.totals.map(function (t) {
      return { label: t.info.label, backgroundColor: colorOf[t.info.id], pointRadius: 6,
        data: [{ x: Math.round(t.cost.usd * 100) / 100, y: Math.round(t.cache.reuse * 1000) / 10, label: t.info.label }] };
    }) },
    options: { scales: { x: { title: { display: true, text: "estimated cost ($)" } }, y: { min: 0, max: 100, title: { display: true, text: "cache reuse (% of prompt tokens)" } } },
      plugins: { tooltip: { callbacks: { label: function (c) { return pointLabel(c) + ": " + c.raw.y + "% reuse, $" + c.raw.x; } } } } }
  });

  function contextDatasets(session) {
    return session.rows.map(function (row) {
      var marks = {};
      row.actions.forEach(function (a) { if (MARKED[a.kind]) marks[a.request] = true; });
      var points = row.series.map(function (p) { return { x: p[0], y: p[1] }; });
      // Markers sit on the request right after each action; add it if downsampling dropped it.
      Object.keys(marks).forEach(function (k) {
        var i = Number(k);
        if (!points.some(function (p) { return p.x === i; })) {
          var a = row.actions.find(function (x) { return x.request === i; });
          points.push({ x: i, y: a.tokensAfter });
        }
      });
      points.sort(function (a, b) { return a.x - b.x; });
      return { label: row.info.label, borderColor: colorOf[row.info.id], backgroundColor: colorOf[row.info.id], borderWidth: 1.5, tension: 0,
        data: points, pointRadius: points.map(function (p) { return marks[p.x] ? 4 : 0; }), pointStyle: "triangle" };
    });
  }

  function kindDatasets(session) {
    var kinds = ["constraint", "path", "error", "result", "command"];
    return { labels: kinds, datasets: session.rows.map(function (row) {
      return { label: row.info.label, backgroundColor: colorOf[row.info.id], data: kinds.map(function (k) {
        var v = row.retention.byKind[k]; return v && v.total ? Math.round(v.kept / v.total * 1000) / 10 : null; }) };
    }) };
  }

  function windowLines(session) {
    var last = session.requests > 0 ? session.requests - 1 : 1;
    var w = data.settings.window, t = data.settings.window - data.settings.reserve;
    return [
      { label: "window", data: [{ x: 0, y: w }, { x: last, y: w }], borderColor: "#868e96", borderDash: [6, 4], borderWidth: 1, pointRadius: 0 },
      { label: "compaction threshold", data: [{ x: 0, y: t }, { x: last, y: t }], borderColor: "#adb5bd", borderDash: [2, 3], borderWidth: 1, pointRadius: 0 }
    ];
  }

  function showSession(i) {
    var session = data.sessions[i];
    if (charts.context) charts.context.destroy();
    if (charts.kinds) charts.kinds.destroy();
    charts.context = new Chart(document.getElementById("chart-context"), {
      type: "line", data: { datasets: contextDatasets(session).concat(windowLines(session)) },
      options: { parsing: false, scales: { x: { type: "linear", title: { display: true, text: "request" } },
        y: { beginAtZero: true, title: { display: true, text: "context tokens" } } },
        plugins: { annotation: undefined } }
    });
    charts.kinds = new Chart(document.getElementById("chart-kinds"), {
      type: "bar", data: kindDatasets(session),
      options: { scales: { y: { min: 0, max: 100, title: { display: true, text: "kept (%)" } } } }
    });
    var holder = document.getElementById("session-table");
    var tpl = document.getElementById("session-tables").content.querySelector('[data-session="' + i + '"]');
    holder.innerHTML = "<h3>" + session.name.replace(/[<&]/g, "") + ": " + session.requests + " requests, " + session.probes.total + " probes</h3>" + (tpl ? tpl.innerHTML : "");
  }

  document.getElementById("session-select").addEventListener("change", function (e) { showSession(Number(e.target.value)); });
  // Start on the longest session: it shows the most compactions.
  var longest = 0;
  data.sessions.forEach(function (s, i) { if (s.requests > data.sessions[longest].requests) longest = i; });
  if (data.sessions.length) { document.getElementById("session-select").value = String(longest); showSession(longest); }

  // Tell tests what drew: a chart counts when its canvas has non-blank pixels and its datasets have points.
  var drawn = 0, names = [];
  Object.keys(charts).forEach(function (name) {
    var chart = charts[name];
    var canvas = chart.canvas, ctx = canvas.getContext("2d");
    var pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data, ink = 0;
    for (var p = 3; p < pixels.length; p += 4) if (pixels[p] !== 0) { ink++; if (ink > 50) break; }
    var points = chart.data.datasets.reduce(function (s, d) { return s + d.data.length; }, 0);
    if (ink > 50 && points > 0) { drawn++; names.push(name); }
  });
  document.documentElement.setAttribute("data-rendered", String(drawn));
  document.documentElement.setAttribute("data-charts", names.join(","));
})();
`;
