// The times in the person's own time zone, the time left counted down, and live updates: when
// the server says something changed, the page is shown anew (a question answered elsewhere or
// expired disappears). The pages work without this script: they show the times in UTC.
(function () {
  var now = new Date();
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var at = new Date(el.getAttribute("datetime"));
    var shown = { hour: "numeric", minute: "2-digit", timeZoneName: "short" };
    if (el.hasAttribute("data-seconds")) shown.second = "2-digit";
    if (at.toDateString() !== now.toDateString()) { shown.month = "short"; shown.day = "numeric"; }
    el.title = el.textContent;
    el.textContent = at.toLocaleString(navigator.languages, shown);
  });
  // As the server writes it (pages.rs, time_left).
  var left = function (ms) {
    var s = Math.max(0, Math.floor(ms / 1000)), m = Math.floor(s / 60);
    if (s === 0) return "time is up";
    if (s < 60) return s + " s left";
    if (s < 600) return m + " min " + (s % 60) + " s left";
    if (s < 3600) return m + " min left";
    return Math.floor(s / 3600) + " h " + (m % 60) + " min left";
  };
  var counters = document.querySelectorAll("[data-until]");
  var tick = function () {
    counters.forEach(function (el) {
      var ms = Date.parse(el.getAttribute("data-until")) - Date.now();
      el.textContent = left(ms);
      // The last minute stands out, as in the terminal.
      el.classList.toggle("urgent", ms < 60000);
    });
  };
  if (counters.length) { tick(); setInterval(tick, 1000); }

  var url = document.body.getAttribute("data-events");
  if (!url || !window.EventSource) return;
  var source = new EventSource(url);
  var reload = function () { source.close(); window.location.reload(); };
  ["pending", "answered", "declined", "timed_out", "cancelled", "lagged"].forEach(function (name) {
    source.addEventListener(name, reload);
  });
  // A form being sent is this page's own change: a reload now would cancel the sending.
  document.addEventListener("submit", function () { source.close(); }, true);
})();
