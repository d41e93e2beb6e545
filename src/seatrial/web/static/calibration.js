/* The calibration page's chart: agreement and kappa per judge over time. The words it shows
   come from the page (data- attributes), in the page's language. */
"use strict";
(function () {
  if (!window.echarts) { return; }
  var groups = JSON.parse(document.getElementById("calibration-data").textContent);
  var node = document.getElementById("calibration-chart");
  var series = [];
  groups.forEach(function (g) {
    series.push({name: g.name + " " + node.dataset.agreement, type: "line", data: g.agreement});
    series.push({name: g.name + " " + node.dataset.kappa, type: "line", data: g.kappa,
                 lineStyle: {type: "dashed"}});
  });
  echarts.init(node).setOption({
    tooltip: {trigger: "axis"},
    /* the page's font stack, Chinese faces included: labels may be Chinese */
    textStyle: {fontFamily: getComputedStyle(document.body).fontFamily},
    legend: {type: "scroll"},
    xAxis: {type: "time"},
    yAxis: {type: "value", min: -1, max: 1},
    series: series
  });
})();
