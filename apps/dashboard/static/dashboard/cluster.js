/* The cluster page: heatmap, traffic charts and tables, kept live over the
 * cluster's websocket. */
(function () {
  "use strict";
  const root = document.getElementById("cluster-page");
  // What the page shows, as the server stamped it (metrics.selectors.cluster_state_stamp).
  const stamp = { model: root.dataset.stampModel, window: root.dataset.stampWindow };
  const token = () => stamp.model + "|" + stamp.window;
  const heatmap = Charts.heatmapInit({
    stamp: token,
    el: document.getElementById("heatmap"),
    apiUrl: root.dataset.heatmapUrl,
    partitionsUrl: root.dataset.partitionsUrl,
    metricSelect: document.getElementById("heatmap-metric"),
    filterInput: document.getElementById("heatmap-filter"),
    internalInput: document.getElementById("heatmap-internal"),
    sortSelect: document.getElementById("heatmap-sort"),
    prevButton: document.getElementById("heatmap-prev"),
    nextButton: document.getElementById("heatmap-next"),
    cellPanel: document.getElementById("cell-partitions"),
  });
  const traffic = Charts.trafficInit({
    stamp: token,
    apiUrl: root.dataset.trafficUrl,
    targets: {
      network_in: document.getElementById("chart-network-in"),
      network_out: document.getElementById("chart-network-out"),
      messages_in: document.getElementById("chart-messages-in"),
    },
    emptyNote: document.getElementById("traffic-empty"),
    box: document.getElementById("traffic-charts"),
  });
  const canary = Charts.canaryInit({
    apiUrl: root.dataset.canaryUrl,
    minutes: 10,
    targets: {
      produce_p99_ms: document.getElementById("chart-canary-produce"),
      end_to_end_p99_ms: document.getElementById("chart-canary-e2e"),
    },
    emptyNote: document.getElementById("canary-empty"),
    box: document.getElementById("canary-charts"),
  });
  // The regions for the page's stamp, its topic search and page: after a push every
  // open page asks for the same stamp, and the server builds the answer once for all.
  const liveUrl = "/clusters/" + encodeURIComponent(root.dataset.cluster) + "/live/";
  let askCurrent = false;
  async function regionsFetch() {
    const page = new URLSearchParams(location.search);
    const query = new URLSearchParams({ stamp: askCurrent ? "" : token() });
    askCurrent = false;
    for (const key of ["topic", "topics_page"]) if (page.has(key)) query.set(key, page.get(key));
    const answer = await Live.fetchJson(liveUrl + "?" + query);
    Live.regionsApply(answer.regions);
    stampAdopt(answer.stamp, false);
  }
  const regions = Live.coalesce(regionsFetch);

  /* Take a newer state than the page's (pushed, or answered after a missed push) and
   * fetch only what it changed: the regions and heatmap for a new model, all of it for
   * a new window (the summary's balance ratios and the charts read the window). */
  function stampAdopt(fresh, withRegions) {
    const modelChanged = fresh.model !== stamp.model;
    const windowChanged = fresh.window !== stamp.window;
    stamp.model = fresh.model;
    stamp.window = fresh.window;
    if (withRegions && (modelChanged || windowChanged)) regions();
    if (modelChanged || windowChanged) heatmap.reload();
    if (windowChanged) traffic.reload();
    canary.reload(); // its rounds come every few seconds, whatever the stamp says
  }

  // After a reconnection: ask for the current state, whatever the page's stamp.
  function everything() {
    askCurrent = true;
    regions();
  }

  const request = document.getElementById("plan-request");
  if (request) {
    request.addEventListener("submit", async () => {
      const data = new FormData(request);
      const error = document.getElementById("plan-request-error");
      error.textContent = "";
      const brokers = String(data.get("brokers") || "").split(",").map((b) => b.trim()).filter(Boolean);
      const disks = String(data.get("disks") || "").split(",").map((d) => d.trim()).filter(Boolean);
      const response = await fetch(request.dataset.url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": Live.csrfToken(), Accept: "application/json" },
        body: JSON.stringify({ mode: data.get("mode"), brokers: brokers, disks: disks, reason: data.get("reason") }),
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        error.textContent = answer.detail || Object.entries(answer).map(([k, v]) => k + ": " + v).join("; ");
        return;
      }
      location.href = "plans/" + answer.id + "/";
    });
  }

  Live.connect("/ws/clusters/" + encodeURIComponent(root.dataset.cluster) + "/", {
    onEvent(message) {
      const stamped = message.type === "cluster.changed" || message.type === "loads.changed";
      if (stamped && !message.stamp) {
        everything();
        return;
      }
      if (stamped) {
        // One stamp per sync or new window for every open page.
        const last = document.getElementById("last-sync");
        if (last && message.synced_at) last.textContent = "just now";
        stampAdopt(message.stamp, true);
      } else if (message.type === "plan.changed") {
        regions();
      }
    },
    onReconnect: everything,
  });
})();
