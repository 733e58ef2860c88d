// The web view's live parts. Every element with `data-live` and an id is
// replaced, every `data-refresh` ms, by the same element of a fresh copy of
// the page (rendered and escaped by the server; DOMParser runs no script).
// Without JavaScript the pages are the same, only still.
(function () {
  "use strict";
  var every = Number(document.body.getAttribute("data-refresh"));
  if (!every || !document.querySelector("[data-live]")) return;
  var stamp = document.getElementById("updated");
  function tick() {
    fetch(location.href, { credentials: "same-origin", cache: "no-store", headers: { "Accept": "text/html" } })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.text();
      })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html");
        document.querySelectorAll("[data-live][id]").forEach(function (el) {
          var next = fresh.getElementById(el.id);
          if (next) el.replaceWith(document.importNode(next, true));
        });
        if (stamp) stamp.textContent = "updated " + new Date().toLocaleTimeString();
        // A finished experiment's page stops refreshing.
        if (fresh.body.getAttribute("data-refresh")) setTimeout(tick, every);
        else if (stamp) stamp.textContent = "finished; updated " + new Date().toLocaleTimeString();
      })
      .catch(function (e) {
        if (stamp) stamp.textContent = "not updated: " + e.message;
        setTimeout(tick, every * 2);
      });
  }
  setTimeout(tick, every);
})();
