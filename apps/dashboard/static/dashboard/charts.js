/* The partition heatmap and the per-broker traffic charts (Plotly, served locally).
 * Colour scales are colour-blind safe: Viridis for counts, Cividis for traffic, and
 * the Okabe-Ito palette (plus dash patterns beyond 8 brokers) for lines. */
(function () {
  "use strict";

  const OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
  const DASHES = ["solid", "dot", "dash", "longdash", "dashdot"];
  const CONFIG = { displaylogo: false, responsive: true };
  const ROW_PX = 18; // one topic row; 500 topics scroll inside their box
  /* Title at the top left, the legend in the top margin under it: below the plot a
   * horizontal legend lands on the x axis's labels (a date axis adds a second line). */
  const LEGEND = { orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom" };
  const TITLE = { x: 0, xanchor: "left", xref: "paper", y: 1, yanchor: "top", yref: "container", pad: { t: 6 } };

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

  /* Heatmap: brokers (columns) x one page of topics (rows), the heaviest first, the
   * rest summed into one "other topics" row; search, sort and paging on the server.
   * opts: el, apiUrl, partitionsUrl, metricSelect, filterInput, internalInput,
   * sortSelect, prevButton, nextButton, cellPanel, and stamp (optional: a function
   * answering the cluster state the page shows). Returns {reload()}. */
  const OTHER = "(other topics)";
  function heatmapInit(opts) {
    const el = opts.el;
    const limit = 50;
    let data = null;
    let offset = 0;

    function draw() {
      if (!data) return;
      const rows = data.topics.map((t, i) => i);
      const ys = data.topics.slice();
      const zs = data.z.slice();
      if (data.other_topics) {
        ys.push(OTHER + " ×" + data.other_topics);
        zs.push(data.other);
      }
      const x = data.brokers.map(String);
      const ticks = data.brokers.map((b, i) => (data.broker_alive[i] ? String(b) : b + " ✕ dead"));
      const counts = data.unit !== "B/s";
      const iec = counts ? { unit: "", div: 1 } : iecUnit(data.z.flat());
      const unit = counts ? data.unit : iec.unit + "/s";
      const trace = {
        type: "heatmap",
        x: x,
        y: ys,
        z: zs.map((row) => scaled(row, iec.div)),
        colorscale: counts ? "Viridis" : "Cividis",
        // Scale from 0, so a colour means the same amount whatever the filter shows.
        zauto: false,
        zmin: 0,
        // The "other topics" row is a sum of many: it does not set the scale.
        zmax: Math.max(counts ? 1 : 1 / iec.div, ...data.z.map((row) => Math.max(0, ...row) / iec.div)),
        xgap: 1,
        ygap: 1,
        colorbar: { title: { text: unit }, thickness: 12 },
        hovertemplate: "broker %{x}<br>topic %{y}<br>%{z" + (counts ? "" : ":.3~f") + "} " + unit + "<extra></extra>",
      };
      const layout = {
        height: Math.max(260, ys.length * ROW_PX + 140),
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
      el.dataset.topicsTotal = String(data.topics_total);
      el.dataset.renders = String(Number(el.dataset.renders || 0) + 1);
      const note = document.getElementById("heatmap-note");
      if (opts.prevButton) opts.prevButton.disabled = data.offset === 0;
      if (opts.nextButton) opts.nextButton.disabled = data.offset + rows.length >= data.topics_total;
      const span = data.topics_total
        ? ` · topics ${data.offset + 1}–${data.offset + rows.length} of ${data.topics_total}`
        : " · no topic matches";
      if (note) {
        note.textContent = (data.window_end
          ? data.label + ", window ending " + new Date(data.window_end).toLocaleTimeString()
          : counts
            ? data.label + " per broker and topic"
            : data.label + ": no traffic measured yet") + span;
      }
    }

    async function reload() {
      const params = new URLSearchParams({
        metric: opts.metricSelect.value,
        internal: opts.internalInput.checked ? "true" : "false",
        search: (opts.filterInput.value || "").trim(),
        sort: opts.sortSelect ? opts.sortSelect.value : "load",
        limit: String(limit),
        offset: String(offset),
      });
      // The cluster state the page shows: the server shares one answer per state.
      if (opts.stamp) params.set("stamp", opts.stamp());
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

    const run = Live.coalesce(reload);
    function fromStart() {
      offset = 0;
      run();
    }
    opts.metricSelect.addEventListener("change", fromStart);
    opts.internalInput.addEventListener("change", fromStart);
    opts.filterInput.addEventListener("input", fromStart);
    if (opts.sortSelect) opts.sortSelect.addEventListener("change", fromStart);
    if (opts.prevButton) {
      opts.prevButton.addEventListener("click", () => {
        offset = Math.max(0, offset - limit);
        run();
      });
    }
    if (opts.nextButton) {
      opts.nextButton.addEventListener("click", () => {
        offset += limit;
        run();
      });
    }
    run().then(() => {
      el.on("plotly_click", (ev) => {
        const point = ev.points && ev.points[0];
        if (point && !String(point.y).startsWith(OTHER)) cellShow(point.y, point.x).catch((err) => console.warn(err));
      });
    });
    return { reload: run, cellShow: cellShow };
  }

  /* Traffic charts: one line per broker over the kept windows. opts: apiUrl, targets
   * {network_in: el, network_out: el, messages_in: el}, box (hidden while empty), emptyNote,
   * stamp (optional, as for the heatmap). */
  function trafficInit(opts) {
    const units = { network_in: "B/s", network_out: "B/s", messages_in: "msg/s" };
    async function reload() {
      const query = opts.stamp ? "?" + new URLSearchParams({ stamp: opts.stamp() }) : "";
      const data = await Live.fetchJson(opts.apiUrl + query);
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
          // null: a window not measured; a gap in the line, never a drop to 0.
          y: scaled(data.series[b][measure], iec.div),
          connectgaps: false,
          line: { color: OKABE_ITO[i % OKABE_ITO.length], dash: DASHES[Math.floor(i / OKABE_ITO.length) % DASHES.length], width: 2 },
          hovertemplate: "broker " + b + ": %{y:.3~f} " + unit + "<extra></extra>",
        }));
        const layout = {
          height: 280,
          margin: { l: 70, r: 10, t: 60, b: 45 },
          title: { ...TITLE, text: el.dataset.title + " (" + unit + ")", font: { size: 14 } },
          yaxis: { rangemode: "tozero" },
          legend: LEGEND,
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

  /* The canary's latency per broker over the last minutes (apps/canary): one chart per
   * measure, a line per broker; a round a broker was not measured in is a gap. */
  function canaryInit(opts) {
    async function rounds() {
      const since = new Date(Date.now() - opts.minutes * 60000).toISOString();
      let url = opts.apiUrl + "?" + new URLSearchParams({ since: since, limit: "1000" });
      const found = [];
      while (url) {
        const page = await Live.fetchJson(url);
        found.push(...page.results);
        url = page.next;
      }
      return found;
    }
    async function reload() {
      const found = await rounds();
      opts.emptyNote.hidden = found.length > 0;
      opts.box.hidden = found.length === 0;
      if (found.length === 0) return;
      const times = [...new Set(found.map((w) => w.at))];
      const brokers = [...new Set(found.map((w) => w.broker_id))].sort((a, b) => a - b);
      for (const [measure, el] of Object.entries(opts.targets)) {
        const traces = brokers.map((b, i) => {
          const at = new Map(found.filter((w) => w.broker_id === b).map((w) => [w.at, w[measure]]));
          return {
            type: "scatter",
            mode: times.length > 1 ? "lines" : "markers",
            name: "broker " + b,
            x: times,
            y: times.map((t) => (at.has(t) ? at.get(t) : null)),
            connectgaps: false,
            line: { color: OKABE_ITO[i % OKABE_ITO.length], dash: DASHES[Math.floor(i / OKABE_ITO.length) % DASHES.length], width: 2 },
            hovertemplate: "broker " + b + ": %{y:.1f} ms<extra></extra>",
          };
        });
        const layout = {
          height: 260,
          margin: { l: 60, r: 10, t: 60, b: 45 },
          title: { ...TITLE, text: el.dataset.title + " (ms)", font: { size: 14 } },
          yaxis: { rangemode: "tozero" },
          legend: LEGEND,
          paper_bgcolor: "rgba(0,0,0,0)",
        };
        Plotly.react(el, traces, layout, CONFIG);
        el.dataset.rounds = String(times.length);
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
        height: 260,
        title: { ...TITLE, text: el.dataset.title + (unit ? " (" + unit + ")" : ""), font: { size: 14 } },
        margin: { l: 55, r: 10, t: 60, b: 45 },
        xaxis: { type: "category", title: { text: "broker" } },
        legend: LEGEND,
        paper_bgcolor: "rgba(0,0,0,0)",
      },
      CONFIG,
    );
  }

  /* A plan's replication throttle over time (a step line, MB/s) and the slowest
   * broker's canary produce p99 of each round (ms, right axis), from the plan's start
   * to its end (or now). */
  function throttleInit(box) {
    const el = box.querySelector(".plot");
    async function canaryRounds(since, until) {
      const params = { since: since, limit: "1000" };
      if (until) params.until = until;
      let url = box.dataset.canaryUrl + "?" + new URLSearchParams(params);
      const found = [];
      while (url) {
        const page = await Live.fetchJson(url);
        found.push(...page.results);
        url = page.next;
      }
      return found;
    }
    async function reload() {
      const since = box.dataset.since;
      const until = box.dataset.until || "";
      const [trace, rounds] = await Promise.all([Live.fetchJson(box.dataset.throttleUrl), canaryRounds(since, until)]);
      const end = until || new Date().toISOString();
      const steps = trace.map((p) => [p.at, p.rate / 1e6, p.reason]);
      if (steps.length) steps.push([end, steps[steps.length - 1][1], ""]);
      const worst = new Map();
      for (const w of rounds) {
        const v = w.acked < w.sent || w.produce_p99_ms === null ? null : w.produce_p99_ms;
        if (v !== null && (!worst.has(w.at) || worst.get(w.at) < v)) worst.set(w.at, v);
      }
      const times = [...worst.keys()].sort();
      const traces = [
        {
          type: "scatter", mode: "lines", name: "throttle (MB/s)", line: { shape: "hv", color: OKABE_ITO[0], width: 2 },
          x: steps.map((s) => s[0]), y: steps.map((s) => s[1]), text: steps.map((s) => s[2]),
          hovertemplate: "%{y:.1f} MB/s<br>%{text}<extra></extra>",
        },
        {
          type: "scatter", mode: "lines", name: "slowest canary p99 (ms)", yaxis: "y2", line: { color: OKABE_ITO[1], width: 1.5, dash: "dot" },
          x: times, y: times.map((t) => worst.get(t)), hovertemplate: "%{y:.0f} ms<extra></extra>",
        },
      ];
      const layout = {
        height: 300,
        margin: { l: 60, r: 60, t: 60, b: 45 },
        title: { ...TITLE, text: el.dataset.title, font: { size: 14 } },
        yaxis: { title: { text: "MB/s" }, rangemode: "tozero" },
        yaxis2: { title: { text: "ms" }, overlaying: "y", side: "right", rangemode: "tozero" },
        legend: LEGEND,
        paper_bgcolor: "rgba(0,0,0,0)",
      };
      Plotly.react(el, traces, layout, CONFIG);
      el.dataset.points = String(steps.length);
    }
    const run = Live.coalesce(reload);
    run();
    return { reload: run };
  }

  window.Charts = { heatmapInit, trafficInit, canaryInit, throttleInit, loadBars, iecUnit, escapeHtml };
})();
