/* The cluster page: heatmap, traffic charts and tables, kept live over the
 * cluster's websocket. */
(function () {
  "use strict";
  const root = document.getElementById("cluster-page");
  const heatmap = Charts.heatmapInit({
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
    apiUrl: root.dataset.trafficUrl,
    targets: {
      network_in: document.getElementById("chart-network-in"),
      network_out: document.getElementById("chart-network-out"),
      messages_in: document.getElementById("chart-messages-in"),
    },
    emptyNote: document.getElementById("traffic-empty"),
    box: document.getElementById("traffic-charts"),
  });
  const regions = Live.coalesce(Live.regionsRefresh);

  function everything() {
    regions();
    heatmap.reload();
    traffic.reload();
  }

  const request = document.getElementById("plan-request");
  if (request) {
    request.addEventListener("submit", async () => {
      const data = new FormData(request);
      const error = document.getElementById("plan-request-error");
      error.textContent = "";
      const brokers = String(data.get("brokers") || "").split(",").map((b) => b.trim()).filter(Boolean);
      const response = await fetch(request.dataset.url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": Live.csrfToken(), Accept: "application/json" },
        body: JSON.stringify({ mode: data.get("mode"), brokers: brokers, reason: data.get("reason") }),
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        error.textContent = answer.detail || Object.entries(answer).map(([k, v]) => k + ": " + v).join("; ");
        return;
      }
      location.href = "plans/" + answer.id + "/";
    });
  }

  // What the page shows, as the server stamped it (metrics.selectors.cluster_state_stamp).
  const stamp = { model: root.dataset.stampModel, window: root.dataset.stampWindow };

  Live.connect("/ws/clusters/" + encodeURIComponent(root.dataset.cluster) + "/", {
    onEvent(message) {
      if (message.type === "cluster.changed") {
        const fresh = message.stamp;
        if (!fresh) {
          everything();
          return;
        }
        // One stamp per sync for every open page: fetch only what changed.
        const last = document.getElementById("last-sync");
        if (last && message.synced_at) last.textContent = "just now";
        if (fresh.model !== stamp.model) {
          regions();
          heatmap.reload();
        }
        // A sync tick is also the fallback if a new window went unannounced.
        if (fresh.window !== stamp.window) {
          heatmap.reload();
          traffic.reload();
        }
        stamp.model = fresh.model;
        stamp.window = fresh.window;
      } else if (message.type === "loads.changed") {
        regions();
        heatmap.reload();
        traffic.reload();
      } else if (message.type === "plan.changed") {
        regions();
      }
    },
    onReconnect: everything,
  });
})();
