/// The flame graph's embedded script: click to zoom, reset, search with highlighting and the
/// matched share, hover details, and labels fitted to box widths. No network, no libraries.
/// A URL ending in `#zoom=NAME&search=REGEX` opens zoomed on the first frame named NAME and
/// searching (for links, and for the headless browser check).
/// `FlameGraphSVG` prepends the layout constants (`ICICLE`, `LEFT`, `WIDTH`, `CHAR`).
enum FlameGraphScript {
    static let source = #"""
    var frames = [], details, matched, resetButton, zoomed = null;
    function level(f) { return ICICLE ? f.y : -f.y; }
    function fitted(name, width) {
      var fit = Math.floor((width - 6) / CHAR);
      if (fit < 3) return "";
      return name.length <= fit ? name : name.substring(0, fit - 2) + "..";
    }
    function place(f, x, width, faded) {
      f.g.removeAttribute("display");
      f.rect.setAttribute("x", x.toFixed(2));
      f.rect.setAttribute("width", width.toFixed(2));
      f.g.setAttribute("opacity", faded ? "0.55" : "1");
      var label = fitted(f.name, width);
      if (!f.text && label) {
        f.text = document.createElementNS("http://www.w3.org/2000/svg", "text");
        f.text.setAttribute("y", (f.y + 10.5).toFixed(1));
        f.g.appendChild(f.text);
      }
      if (f.text) { f.text.setAttribute("x", (x + 3).toFixed(2)); f.text.textContent = label; }
    }
    function zoom(target) {
      zoomed = target && target.name !== "all" ? target : null;
      if (zoomed) resetButton.removeAttribute("display"); else resetButton.setAttribute("display", "none");
      var scale = zoomed ? WIDTH / zoomed.w : 1, origin = zoomed ? zoomed.x : LEFT;
      frames.forEach(function (f) {
        if (!zoomed) { place(f, f.x, f.w, false); return; }
        var inside = f.x >= zoomed.x - 0.01 && f.x + f.w <= zoomed.x + zoomed.w + 0.01;
        var covers = f.x <= zoomed.x + 0.01 && f.x + f.w >= zoomed.x + zoomed.w - 0.01;
        if (level(f) < level(zoomed) && covers) place(f, LEFT, WIDTH, true);
        else if (level(f) >= level(zoomed) && inside) place(f, LEFT + (f.x - origin) * scale, f.w * scale, false);
        else f.g.setAttribute("display", "none");
      });
    }
    function search(pattern) {
      var expression = null;
      try { expression = pattern ? new RegExp(pattern) : null; } catch (error) { matched.textContent = "Bad expression: " + error.message; return; }
      var ranges = [];
      frames.forEach(function (f) {
        var hit = expression !== null && expression.test(f.name);
        f.rect.setAttribute("fill", hit ? "#e040e0" : f.fill);
        if (hit) ranges.push([f.x, f.x + f.w]);
      });
      if (!expression) { matched.textContent = " "; return; }
      ranges.sort(function (a, b) { return a[0] - b[0]; });
      var covered = 0, end = -1;
      ranges.forEach(function (r) {
        if (r[0] >= end) { covered += r[1] - r[0]; end = r[1]; }
        else if (r[1] > end) { covered += r[1] - end; end = r[1]; }
      });
      matched.textContent = "Matched: " + (100 * covered / WIDTH).toFixed(2) + "% (" + ranges.length + " frames)";
    }
    function askSearch() {
      var pattern = window.prompt("Search frames (regular expression); empty to clear", "");
      if (pattern !== null) search(pattern);
    }
    function init() {
      details = document.getElementById("details");
      matched = document.getElementById("matched");
      resetButton = document.getElementById("reset");
      var groups = document.getElementById("frames").children;
      for (var i = 0; i < groups.length; i++) {
        var g = groups[i], rect = g.getElementsByTagName("rect")[0], info = g.getElementsByTagName("title")[0].textContent;
        var f = { g: g, rect: rect, text: g.getElementsByTagName("text")[0] || null, info: info,
                  name: info.substring(0, info.lastIndexOf(" (")), fill: rect.getAttribute("fill"),
                  x: parseFloat(rect.getAttribute("x")), w: parseFloat(rect.getAttribute("width")),
                  y: parseFloat(rect.getAttribute("y")) };
        frames.push(f);
        g.addEventListener("click", zoom.bind(null, f));
        g.addEventListener("mouseover", function () { details.textContent = this.info; }.bind(f));
        g.addEventListener("mouseout", function () { details.textContent = " "; });
      }
      resetButton.addEventListener("click", function () { zoom(null); });
      document.getElementById("search").addEventListener("click", askSearch);
      document.addEventListener("keydown", function (event) {
        if ((event.ctrlKey && event.key === "f") || event.key === "/") { event.preventDefault(); askSearch(); }
        if (event.key === "Escape") { zoom(null); search(""); }
      });
      var zoomTo = /[#&]zoom=([^&]*)/.exec(window.location.hash), searchFor = /[#&]search=([^&]*)/.exec(window.location.hash);
      if (zoomTo) zoom(frames.filter(function (f) { return f.name === decodeURIComponent(zoomTo[1]); })[0] || null);
      if (searchFor) search(decodeURIComponent(searchFor[1]));
      document.documentElement.setAttribute("data-ready", "true");
    }
    window.addEventListener("load", init);
    """#
}
