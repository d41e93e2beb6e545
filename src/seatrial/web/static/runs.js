/* The runs page's trend: the table and four charts, read from /api/trends. */
"use strict";
(function () {
  var box = document.getElementById("trend");
  fetch(box.dataset.source, { credentials: "same-origin" })
    .then(function (answer) { return answer.json(); })
    .then(function (data) { draw(data.runs); });
  function cell(row, text, numeric) {
    var td = document.createElement("td");
    td.textContent = text;  /* text, never markup */
    if (numeric) { td.className = "num"; }
    row.appendChild(td);
  }
  function draw(points) {
    var body = document.getElementById("trend-rows");
    points.slice().reverse().forEach(function (p) {
      var row = document.createElement("tr");
      var link = document.createElement("a");
      link.href = "/runs/" + encodeURIComponent(p.run_id);
      link.textContent = p.run_id;
      var first = document.createElement("td");
      first.appendChild(link);
      row.appendChild(first);
      cell(row, new Date(p.started_at * 1000).toISOString().slice(0, 16).replace("T", " "));
      cell(row, String(p.attempts), true);
      cell(row, p.pass_rate === null ? "-" : (p.pass_rate * 100).toFixed(1) + "%", true);
      cell(row, p.p95_ms === null ? "-" : p.p95_ms.toFixed(0), true);
      cell(row, String(p.tokens), true);
      cell(row, "$" + p.cost_usd.toFixed(4), true);
      body.appendChild(row);
    });
    if (typeof echarts === "undefined") { return; }  /* the table still shows the data */
    var labels = points.map(function (p) { return p.run_id.slice(9); });
    ["pass_rate", "p95_ms", "tokens", "cost_usd"].forEach(function (key) {
      var node = document.getElementById("trend-" + key);
      var chart = echarts.init(node);
      chart.setOption({
        title: { text: node.dataset.title, textStyle: { fontSize: 13 } },
        tooltip: { trigger: "axis" },
        /* the page's font stack, Chinese faces included: labels may be Chinese */
        textStyle: {fontFamily: getComputedStyle(document.body).fontFamily},
        grid: { left: 60, right: 16, top: 36, bottom: 28 },
        xAxis: { type: "category", data: labels },
        yAxis: key === "pass_rate" ? { type: "value", min: 0, max: 1 } : { type: "value" },
        series: [{ type: "line", showSymbol: points.length < 60,
                   data: points.map(function (p) { return p[key]; }) }]
      });
      chart.on("click", function (e) { window.location = "/runs/" + points[e.dataIndex].run_id; });
      window.addEventListener("resize", function () { chart.resize(); });
    });
  }
})();
