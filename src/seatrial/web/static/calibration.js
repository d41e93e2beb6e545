/* The calibration page's chart: agreement and kappa per judge over time. */
"use strict";
(function () {
  if (!window.echarts) { return; }
  var groups = JSON.parse(document.getElementById("calibration-data").textContent);
  var series = [];
  groups.forEach(function (g) {
    series.push({name: g.name + " agreement", type: "line", data: g.agreement});
    series.push({name: g.name + " kappa", type: "line", data: g.kappa, lineStyle: {type: "dashed"}});
  });
  echarts.init(document.getElementById("calibration-chart")).setOption({
    tooltip: {trigger: "axis"},
    /* the page's font stack, Chinese faces included: labels may be Chinese */
    textStyle: {fontFamily: getComputedStyle(document.body).fontFamily},
    legend: {type: "scroll"},
    xAxis: {type: "time"},
    yAxis: {type: "value", min: -1, max: 1},
    series: series
  });
})();
