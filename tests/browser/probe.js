// Appended to a copy of a report by check_report.sh. After the page has loaded and laid out,
// checks every plotly figure's drawn width (the main-svg width) against its container's
// content width; again after the page's content narrows to 860 px (a one-column grid) and
// after it widens back, each with a window resize event, as a narrower or wider window would.
// (Headless Chromium with a virtual-time budget draws no frames after the load event, so
// layout-driven callbacks such as ResizeObserver only run during the load phase.) After load
// it also checks the text of every figure: none may fall outside the figure (plotly's svg
// clips it), and the title and axis titles may not overlap tick labels, other titles or
// annotations. One line per finding goes to a pre element with the id credence-probe,
// "FAIL ..." for a failure, "DONE" last.
(function () {
  var TOLERANCE = 3; // px
  var lines = [];

  function contentWidth(el) {
    var s = getComputedStyle(el);
    return el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  }
  function inside(a, b) {
    return a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  }
  function overlap(a, b) {
    return a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  }
  function shown(el) {
    var r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && (el.textContent || "").trim() !== "";
  }
  function texts(gd, selector) {
    return Array.prototype.filter.call(gd.querySelectorAll(selector), shown);
  }
  function label(el) {
    return JSON.stringify((el.textContent || "").trim().slice(0, 40));
  }

  function check(phase) {
    var figures = document.querySelectorAll(".plotly-graph-div");
    Array.prototype.forEach.call(figures, function (gd) {
      var svg = gd.querySelector("svg.main-svg");
      var where = gd.id + " (" + phase + ")";
      if (!svg) {
        lines.push("FAIL " + where + ": no main-svg");
        return;
      }
      var drawn = svg.getBoundingClientRect().width;
      var box = contentWidth(gd.parentElement);
      var ok = Math.abs(drawn - box) <= TOLERANCE;
      lines.push((ok ? "ok " : "FAIL ") + where + ": drawn width " + drawn.toFixed(0) + " px, container " +
        box.toFixed(0) + " px");
      if (phase !== "load") return;
      var frame = svg.getBoundingClientRect();
      texts(gd, "text").forEach(function (t) {
        if (!inside(t.getBoundingClientRect(), frame)) lines.push("FAIL " + where + ": text " + label(t) + " is clipped");
      });
      var crowd = texts(gd, ".xtick text, .ytick text, .x2tick text, .xtitle, .x2title, .ytitle, .annotation text");
      texts(gd, ".gtitle, .xtitle, .ytitle").forEach(function (t) {
        crowd.forEach(function (o) {
          if (o !== t && !t.contains(o) && overlap(t.getBoundingClientRect(), o.getBoundingClientRect())) {
            lines.push("FAIL " + where + ": " + label(t) + " overlaps " + label(o));
          }
        });
      });
    });
  }

  function report() {
    lines.push("DONE");
    var pre = document.createElement("pre");
    pre.id = "credence-probe";
    pre.textContent = lines.join("\n");
    document.body.appendChild(pre);
  }

  window.addEventListener("load", function () {
    setTimeout(function () {
      check("load");
      var width = document.body.style.maxWidth;
      document.body.style.maxWidth = "860px";
      window.dispatchEvent(new Event("resize"));
      setTimeout(function () {
        check("narrowed");
        document.body.style.maxWidth = width;
        window.dispatchEvent(new Event("resize"));
        setTimeout(function () {
          check("widened");
          report();
        }, 1500);
      }, 1500);
    }, 1500);
  });
})();
