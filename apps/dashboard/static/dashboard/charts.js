/* The partition heatmap and the per-broker traffic charts (Plotly, served locally).
 * Colour scales are colour-blind safe: Viridis for counts, Cividis for traffic, and
 * the Okabe-Ito palette (plus dash patterns beyond 8 brokers) for lines. */
(function () {
  "use strict";

  const OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
  const DASHES = ["solid", "dot", "dash", "longdash", "dashdot"];
  const CONFIG = { displaylogo: false, responsive: true };
  const ROW_PX = 18; // one topic row; 500 topics scroll inside their box

  /* One unit system everywhere (IEC, as the pages' tables): the unit that suits the
   * largest value, and the divisor that expresses values in it. */
  const IEC = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  function iecUnit(values) {
    let max = 0;
    for (const v of values) if (v > max) max = v;
    let i = 0;
    while (max >= 1024 && i < IEC.length - 1) {
      max /= 1024;
      i += 1;
    }
    return { unit: IEC[i], div: Math.pow(1024, i) };
  }
  function scaled(values, div) {
    return values.map((v) => (v === null || v === undefined ? v : v / div));
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  }

  /* Heatmap: brokers (columns) x topics (rows). opts: el, apiUrl, partitionsUrl,
   * metricSelect, filterInput, internalInput, cellPanel. Returns {reload()}. */
  function heatmapInit(opts) {
    const el = opts.el;
    let data = null;

    function visibleRows() {
      const needle = (opts.filterInput.value || "").trim().toLowerCase();
      const rows = [];
      data.topics.forEach((topic, i) => {
        if (!needle || topic.toLowerCase().includes(needle)) rows.push(i);
      });
      return rows;
    }

    function draw() {
      if (!data) return;
      const rows = visibleRows();
      const x = data.brokers.map(String);
      const ticks = data.brokers.map((b, i) => (data.broker_alive[i] ? String(b) : b + " ✕ dead"));
      const counts = data.unit !== "B/s";
      const iec = counts ? { unit: "", div: 1 } : iecUnit(data.z.flat());
      const unit = counts ? data.unit : iec.unit + "/s";
      const trace = {
        type: "heatmap",
        x: x,
        y: rows.map((i) => data.topics[i]),
        z: rows.map((i) => scaled(data.z[i], iec.div)),
        colorscale: counts ? "Viridis" : "Cividis",
        // Scale from 0, so a colour means the same amount whatever the filter shows.
        zauto: false,
        zmin: 0,
        zmax: Math.max(counts ? 1 : 1 / iec.div, ...data.z.map((row) => Math.max(0, ...row) / iec.div)),
        xgap: 1,
        ygap: 1,
        colorbar: { title: { text: unit }, thickness: 12 },
        hovertemplate: "broker %{x}<br>topic %{y}<br>%{z" + (counts ? "" : ":.3~f") + "} " + unit + "<extra></extra>",
      };
      const layout = {
        height: Math.max(260, rows.length * ROW_PX + 140),
        margin: { l: 200, r: 20, t: 60, b: 20 },
        xaxis: { type: "category", side: "top", title: { text: "broker" }, tickvals: x, ticktext: ticks },
        yaxis: { type: "category", autorange: "reversed", automargin: true },
        paper_bgcolor: "rgba(0,0,0,0)",
      };
      Plotly.react(el, [trace], layout, CONFIG);
      el.dataset.metric = data.metric;
      el.dataset.brokers = data.brokers.join(",");
      el.dataset.dead = data.brokers.filter((b, i) => !data.broker_alive[i]).join(",");
      el.dataset.topics = String(rows.length);
      el.dataset.renders = String(Number(el.dataset.renders || 0) + 1);
      const note = document.getElementById("heatmap-note");
      if (note) {
        note.textContent = data.window_end
          ? data.label + ", window ending " + new Date(data.window_end).toLocaleTimeString()
          : counts
            ? data.label + " per broker and topic"
            : data.label + ": no traffic measured yet";
      }
    }

    async function reload() {
      const params = new URLSearchParams({ metric: opts.metricSelect.value, internal: opts.internalInput.checked ? "true" : "false" });
      data = await Live.fetchJson(opts.apiUrl + "?" + params);
      draw();
    }

    async function cellShow(topic, broker) {
      const panel = opts.cellPanel;
      const params = new URLSearchParams({ topic: topic, broker: broker, limit: "1000" });
      const page = await Live.fetchJson(opts.partitionsUrl + "?" + params);
      const rows = page.results
        .map(
          (p) =>
            `<tr data-partition="${p.index}"><td>${p.index}</td><td>${p.leader ?? "none"}</td>` +
            `<td>${p.replicas.join(", ")}</td><td>${p.isr.join(", ")}</td>` +
            `<td>${p.offline ? '<span class="bad">offline</span>' : p.under_replicated ? '<span class="warn">under-replicated</span>' : "ok"}</td></tr>`,
        )
        .join("");
      panel.innerHTML =
        `<h3>${escapeHtml(topic)} on broker ${escapeHtml(broker)}: ${page.count} partition(s)</h3>` +
        `<table class="grid"><thead><tr><th>Partition</th><th>Leader</th><th>Replicas</th><th>ISR</th><th>State</th></tr></thead>` +
        `<tbody>${rows || '<tr><td colspan="5">No replica of this topic on this broker.</td></tr>'}</tbody></table>`;
      panel.hidden = false;
    }

    opts.metricSelect.addEventListener("change", reload);
    opts.internalInput.addEventListener("change", reload);
    opts.filterInput.addEventListener("input", draw);
    const run = Live.coalesce(reload);
    run().then(() => {
      el.on("plotly_click", (ev) => {
        const point = ev.points && ev.points[0];
        if (point) cellShow(point.y, point.x).catch((err) => console.warn(err));
      });
    });
    return { reload: run, cellShow: cellShow };
  }

  /* Traffic charts: one line per broker over the kept windows. opts: apiUrl, targets
   * {network_in: el, network_out: el, messages_in: el}, box (hidden while empty), emptyNote. */
  function trafficInit(opts) {
    const units = { network_in: "B/s", network_out: "B/s", messages_in: "msg/s" };
    async function reload() {
      const data = await Live.fetchJson(opts.apiUrl);
      const brokers = Object.keys(data.series);
      opts.emptyNote.hidden = data.windows.length > 0;
      if (opts.box) opts.box.hidden = data.windows.length === 0;
      for (const [measure, el] of Object.entries(opts.targets)) {
        const isBytes = units[measure] === "B/s";
        const iec = isBytes ? iecUnit(brokers.flatMap((b) => data.series[b][measure])) : { div: 1 };
        const unit = isBytes ? iec.unit + "/s" : units[measure];
        const traces = brokers.map((b, i) => ({
          type: "scatter",
          mode: data.windows.length > 1 ? "lines" : "markers",
          name: "broker " + b,
          x: data.windows,
          y: scaled(data.series[b][measure], iec.div),
          line: { color: OKABE_ITO[i % OKABE_ITO.length], dash: DASHES[Math.floor(i / OKABE_ITO.length) % DASHES.length], width: 2 },
          hovertemplate: "broker " + b + ": %{y:.3~f} " + unit + "<extra></extra>",
        }));
        const layout = {
          height: 260,
          margin: { l: 70, r: 10, t: 30, b: 40 },
          title: { text: el.dataset.title + " (" + unit + ")", font: { size: 14 } },
          yaxis: { rangemode: "tozero" },
          legend: { orientation: "h" },
          paper_bgcolor: "rgba(0,0,0,0)",
        };
        Plotly.react(el, traces, layout, CONFIG);
        el.dataset.windows = String(data.windows.length);
        el.dataset.renders = String(Number(el.dataset.renders || 0) + 1);
      }
    }
    const run = Live.coalesce(reload);
    run();
    return { reload: run };
  }

  /* Before / after bars of per-broker loads (plan and what-if pages): byte measures in
   * the IEC unit that suits them, the title naming it. */
  function loadBars(el, brokers, before, after) {
    const m = el.dataset.measure;
    const bytes = m === "network_in" || m === "network_out" || m === "disk";
    const iec = bytes ? iecUnit(before[m].concat(after[m])) : { unit: "", div: 1 };
    const unit = bytes ? iec.unit + (m === "disk" ? "" : "/s") : "";
    const x = brokers.map(String);
    const hover = "broker %{x}: %{y" + (bytes ? ":.3~f" : "") + "} " + unit;
    Plotly.react(
      el,
      [
        { type: "bar", name: "before", x: x, y: scaled(before[m], iec.div), marker: { color: "#0072B2" }, hovertemplate: hover + "<extra>before</extra>" },
        { type: "bar", name: "after", x: x, y: scaled(after[m], iec.div), marker: { color: "#E69F00" }, hovertemplate: hover + "<extra>after</extra>" },
      ],
      {
        barmode: "group",
        height: 240,
        title: { text: el.dataset.title + (unit ? " (" + unit + ")" : ""), font: { size: 14 } },
        margin: { l: 55, r: 10, t: 30, b: 35 },
        xaxis: { type: "category", title: { text: "broker" } },
        legend: { orientation: "h" },
        paper_bgcolor: "rgba(0,0,0,0)",
      },
      CONFIG,
    );
  }

  window.Charts = { heatmapInit, trafficInit, loadBars, iecUnit, escapeHtml };
})();
