/* Live updates: one websocket per concern, reconnecting with capped exponential
 * backoff and jitter, and helpers to refresh parts of a page without a reload.
 * Served as a plain script (no build step, no CDN). */
(function () {
  "use strict";

  const CLOSE_NOT_SIGNED_IN = 4401;
  const FINAL_CODES = new Set([4403, 4404]); // not allowed / no such cluster: retrying won't help

  function statusShow(state, text) {
    const el = document.getElementById("live-status");
    if (!el) return;
    el.dataset.state = state;
    el.textContent = text;
  }

  /* Open `path` (e.g. "/ws/clusters/demo/") and call onEvent(message) per event.
   * onReconnect runs after every reconnection: events may have been missed meanwhile. */
  function connect(path, { onEvent, onReconnect, minDelay = 1000, maxDelay = 30000 } = {}) {
    let delay = minDelay;
    let opened = false;
    let socket = null;
    let stopped = false;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";

    function open() {
      statusShow("connecting", "connecting…");
      socket = new WebSocket(scheme + location.host + path);
      socket.onopen = () => {
        delay = minDelay;
        statusShow("live", "live");
        if (opened && onReconnect) onReconnect();
        opened = true;
      };
      socket.onmessage = (e) => {
        let message;
        try {
          message = JSON.parse(e.data);
        } catch (err) {
          return;
        }
        if (message.type !== "hello" && onEvent) onEvent(message);
      };
      socket.onclose = (e) => {
        if (stopped) return;
        if (e.code === CLOSE_NOT_SIGNED_IN) {
          statusShow("offline", "signed out");
          location.reload(); // the page then sends us to the sign-in form
          return;
        }
        if (FINAL_CODES.has(e.code)) {
          statusShow("offline", "not allowed");
          return;
        }
        // Jitter spreads the reconnects of many browsers after a server restart.
        const wait = Math.round(delay * (0.5 + Math.random() / 2));
        statusShow("reconnecting", "reconnecting in " + Math.ceil(wait / 1000) + " s");
        setTimeout(open, wait);
        delay = Math.min(delay * 2, maxDelay);
      };
    }
    open();
    return {
      close() {
        stopped = true;
        if (socket) socket.close();
      },
    };
  }

  /* Wrap an async function so bursts of events cause one run at a time, plus at
   * most one more afterwards (never a queue of stale refreshes). */
  function coalesce(fn) {
    let running = false;
    let again = false;
    return async function run() {
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } catch (err) {
        console.warn("live refresh failed", err);
      } finally {
        running = false;
      }
    };
  }

  /* Swap every element marked data-live-region for its fresh HTML; fresh(id) answers
   * the region's new inner HTML, or undefined to leave it. */
  function regionsSwap(fresh) {
    document.querySelectorAll("[data-live-region]").forEach((el) => {
      const html = fresh(el.id);
      if (html !== undefined && html !== el.innerHTML) el.innerHTML = html;
    });
    document.dispatchEvent(new CustomEvent("live:regions"));
  }

  /* Re-fetch this page and swap its live regions (by id). */
  async function regionsRefresh() {
    const response = await fetch(location.href, {
      headers: { "X-Requested-With": "fetch" },
      credentials: "same-origin",
    });
    if (!response.ok) throw new Error("page answered " + response.status);
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    regionsSwap((id) => {
      const el = doc.getElementById(id);
      return el ? el.innerHTML : undefined;
    });
  }

  /* Swap the live regions for those of an answer {id: html} (a live endpoint). */
  function regionsApply(regions) {
    regionsSwap((id) => (Object.prototype.hasOwnProperty.call(regions, id) ? regions[id] : undefined));
  }

  async function fetchJson(url) {
    const response = await fetch(url, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    if (!response.ok) throw new Error(url + " answered " + response.status);
    return response.json();
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  // Forms that only drive scripts (filters, controls) never submit: Enter would reload the
  // page. A listener, not an inline handler, so the Content-Security-Policy allows it.
  document.addEventListener("submit", (event) => {
    if (event.target instanceof HTMLFormElement && event.target.hasAttribute("data-no-submit")) {
      event.preventDefault();
    }
  });

  window.Live = { connect, coalesce, regionsRefresh, regionsApply, fetchJson, statusShow, csrfToken };
})();
