/* The plan page: decisions through the REST API, live state and progress over the
 * cluster's plans websocket, before / after bars, and the moves table. */
(function () {
  "use strict";
  const root = document.getElementById("plan-page");
  const planId = Number(root.dataset.plan);
  const errorBox = document.getElementById("action-error");
  const esc = Charts.escapeHtml;

  // --- decisions (forms are re-rendered live, so listen on the document) ---------
  document.addEventListener("submit", async (e) => {
    const form = e.target.closest("form[data-action]");
    if (!form) return;
    e.preventDefault();
    const body = {};
    new FormData(form).forEach((value, key) => (body[key] = value));
    // An empty number field means "leave as it is": not sent.
    form.querySelectorAll("input[type=number]").forEach((input) => {
      if (input.value === "") delete body[input.name];
    });
    form.querySelectorAll("input[type=checkbox]").forEach((box) => (body[box.name] = box.checked));
    const button = form.querySelector("button");
    button.disabled = true;
    errorBox.hidden = true;
    try {
      const response = await fetch(root.dataset.apiUrl + form.dataset.action + "/", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": Live.csrfToken(), Accept: "application/json" },
        body: JSON.stringify(body),
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        const detail = answer.detail || Object.entries(answer).map(([k, v]) => k + ": " + v).join("; ");
        errorBox.textContent = "Refused (" + response.status + "): " + (detail || response.statusText);
        if (answer.newer_plan && Number.isInteger(answer.newer_plan.id)) {
          // Superseded or stale: one click to the proposal that replaced it.
          const link = document.createElement("a");
          link.href = "../" + answer.newer_plan.id + "/";
          link.className = "button primary";
          link.id = "action-newer-link";
          link.textContent = "Review plan #" + answer.newer_plan.id;
          errorBox.append(" ", link);
        }
        errorBox.hidden = false;
      } else if (form.dataset.action === "rollback" && answer.id) {
        location.href = "../" + answer.id + "/";
        return;
      }
      await refresh();
    } finally {
      button.disabled = false;
    }
  });

  // --- live -----------------------------------------------------------------------
  const regions = Live.coalesce(Live.regionsRefresh);
  const moves = movesTable();
  const throttleBox = document.getElementById("plan-throttle");
  const throttle = throttleBox ? Charts.throttleInit(throttleBox) : null;
  async function refresh() {
    await regions();
    moves.reload();
    if (throttle) throttle.reload();
  }
  const path = "/ws/clusters/" + encodeURIComponent(root.dataset.cluster) + "/";
  Live.connect(path + "plans/", {
    onEvent(message) {
      if (message.plan_id === planId) refresh();
    },
    onReconnect: refresh,
  });
  // Replica moves show in the cluster's sync ticks too (progress between batches).
  Live.connect(path, {
    onEvent(message) {
      if (message.type === "cluster.changed" && ["executing", "approved"].includes(stateNow())) refresh();
    },
  });
  function stateNow() {
    const badge = document.getElementById("plan-state-badge");
    return badge ? badge.dataset.state : "";
  }

  // --- before / after bars -----------------------------------------------------
  // Fetched after the page: they model the whole cluster, seconds at 200k partitions.
  async function barsDraw(box) {
    const loads = await Live.fetchJson(box.dataset.url);
    if (!loads.brokers) {
      box.hidden = true;
      document.getElementById("plan-loads-empty").hidden = false;
      return;
    }
    document.querySelectorAll(".bars .plot").forEach((el) => Charts.loadBars(el, loads.brokers, loads.before, loads.after));
    box.dataset.drawn = "true";
  }
  const bars = document.getElementById("plan-loads");
  if (bars) barsDraw(bars).catch((err) => console.warn(err));

  // --- moves table: sorted and filtered by the API -------------------------------
  function movesTable() {
    const table = document.getElementById("moves");
    const filter = document.getElementById("moves-filter");
    const count = document.getElementById("moves-count");
    let ordering = "topic";

    async function reload() {
      const params = new URLSearchParams({ ordering: ordering, limit: "500" });
      new FormData(filter).forEach((value, key) => {
        if (value !== "") params.set(key, value);
      });
      const page = await Live.fetchJson(root.dataset.movesUrl + "?" + params);
      table.tBodies[0].innerHTML = page.results
        .map((m) => {
          const leader = m.replicas_before[0] !== m.replicas_after[0] ? m.replicas_before[0] + " → " + m.replicas_after[0] : "";
          // JBOD: the dir of each replica the move sends to a dir, and the one it leaves
          const targets = {};
          (m.log_dirs_after || []).forEach((d, i) => {
            if (d !== "any") targets[m.replicas_after[i]] = d;
          });
          const placed = (replicas, dirs, shown) =>
            replicas.map((b, i) => (shown(b) && dirs && dirs[i] && dirs[i] !== "any" ? `${b} <span class="dir">${esc(dirs[i])}</span>` : String(b))).join(", ");
          const before = placed(m.replicas_before, m.log_dirs_before, (b) => b in targets);
          const after = placed(m.replicas_after, m.log_dirs_after, () => true);
          const between = !m.bytes && Object.keys(targets).length && !m.added.length;
          const dirBytes = m.bytes_dirs ? formatBytes(m.bytes_dirs) + " between dirs" : "";
          const size = m.bytes
            ? formatBytes(m.bytes) + (dirBytes ? " + " + dirBytes : "")
            : dirBytes || (m.leader_only ? "leader only" : between ? "between dirs" : "0");
          return (
            `<tr data-move="${esc(m.topic)}-${m.partition}" data-state="${m.state}"><td>${esc(m.topic)}-${m.partition}</td>` +
            `<td>${before}</td><td>${after}</td><td>${leader}</td>` +
            `<td data-bytes="${m.bytes}">${size}</td>` +
            `<td>${m.goals.map(esc).join(", ")}</td><td>${m.state}${m.error ? ": " + esc(m.error) : ""}</td></tr>`
          );
        })
        .join("");
      count.textContent = page.count + " move(s)" + (page.count > page.results.length ? ", first " + page.results.length + " shown" : "");
    }
    table.querySelectorAll("th[data-sort]").forEach((th) => {
      th.tabIndex = 0;
      th.addEventListener("click", () => {
        const key = th.dataset.sort;
        ordering = ordering === key ? "-" + key : key;
        table.querySelectorAll("th[data-sort]").forEach((other) => other.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ordering.startsWith("-") ? "descending" : "ascending");
        run();
      });
    });
    filter.addEventListener("input", () => run());
    const run = Live.coalesce(reload);
    run();
    return { reload: run };
  }

  function formatBytes(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i += 1;
    }
    return (i ? n.toFixed(1) : n) + " " + units[i];
  }
})();
