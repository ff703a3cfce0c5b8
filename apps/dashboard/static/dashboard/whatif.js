/* What-if: post the scenario to the API and draw the answer; nothing is stored. */
(function () {
  "use strict";
  const root = document.getElementById("whatif-page");
  const form = document.getElementById("whatif-form");
  const errorBox = document.getElementById("whatif-error");
  const esc = Charts.escapeHtml;

  function scenario() {
    const data = new FormData(form);
    const add = String(data.get("add") || "")
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [id, rack] = part.split(":");
        return { id: Number(id), rack: rack || null };
      });
    return {
      add_brokers: add,
      remove_brokers: data.getAll("remove").map(Number),
      traffic_scale: Number(data.get("scale") || 1),
    };
  }

  function ratio(value) {
    return value === null || value === undefined ? "—" : Number(value).toFixed(2);
  }

  function draw(result) {
    document.getElementById("whatif-summary").textContent =
      `Mode ${result.mode}${result.brokers.length ? " on brokers " + result.brokers.join(", ") : ""}, ` +
      `traffic ×${result.traffic_scale}: ${result.plan.partitions.length} partition(s) change, ` +
      `${result.report.movement.replica_moves} replica move(s), ${(result.report.movement.bytes_moved / 1048576).toFixed(1)} MiB to copy.`;
    document.querySelector("#whatif-balance tbody").innerHTML = Object.entries(result.report.balance)
      .map(([name, b]) => `<tr><td>${esc(name)}</td><td>${ratio(b.before)}</td><td>${ratio(b.after)}</td><td>${ratio(b.lower_bound)}</td></tr>`)
      .join("");
    // Shown before drawing: Plotly sizes a chart by its box, and a hidden box has no
    // width, so each chart came out at Plotly's default 700 px, over its neighbours.
    document.getElementById("whatif-result").hidden = false;
    document.querySelectorAll("#whatif-result .plot").forEach((el) =>
      Charts.loadBars(el, result.loads.brokers, result.loads.before, result.loads.after),
    );
    const moves = result.report.moves || [];
    document.querySelector("#whatif-moves tbody").innerHTML =
      moves
        .slice(0, 1000)
        .map((m) => `<tr><td>${esc(m.topic)}-${m.partition}</td><td>${m.before.join(", ")}</td><td>${m.after.join(", ")}</td><td>${m.goals.map(esc).join(", ")}</td></tr>`)
        .join("") || '<tr><td colspan="4">Nothing would move.</td></tr>';
  }

  form.addEventListener("submit", async () => {
    errorBox.hidden = true;
    const button = document.getElementById("whatif-run");
    button.disabled = true;
    try {
      const response = await fetch(root.dataset.url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": Live.csrfToken(), Accept: "application/json" },
        body: JSON.stringify(scenario()),
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        errorBox.textContent = answer.detail || JSON.stringify(answer);
        errorBox.hidden = false;
        return;
      }
      draw(answer);
    } finally {
      button.disabled = false;
    }
  });
})();
