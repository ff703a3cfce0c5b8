/* The clusters page: refresh its live regions on every event (and after a reconnect),
 * from the websocket its live region names. */
(function () {
  "use strict";
  const region = document.getElementById("clusters-live");
  const refresh = Live.coalesce(Live.regionsRefresh);
  Live.connect(region.dataset.socket, { onEvent: refresh, onReconnect: refresh });
})();
