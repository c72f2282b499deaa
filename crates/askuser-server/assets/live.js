// Live updates: when the server says something changed, show the page anew (a question answered
// elsewhere or expired disappears). The pages work without this script.
(function () {
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
