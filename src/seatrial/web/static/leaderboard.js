/* The leaderboard's chart: success per agent with its interval. Drawn as SVG, its labels
   sized into the chart (containLabel): agent specs are long and were cut at the edges.
   The words it shows come from the page (data- attributes), in the page's language. */
"use strict";
(function () {
  if (!window.echarts) { return; }
  var data = JSON.parse(document.getElementById("board-data").textContent);
  var node = document.getElementById("board-chart");
  var words = node.dataset;
  var chart = echarts.init(node, null, {renderer: "svg"});
  chart.setOption({
    tooltip: {trigger: "axis"},
    /* the page's font stack, Chinese faces included: labels may be Chinese */
    textStyle: {fontFamily: getComputedStyle(document.body).fontFamily},
    grid: {left: 20, right: 40, top: 40, bottom: 24, containLabel: true},
    xAxis: {type: "category", data: data.agents, axisLabel: {rotate: 20, interval: 0}},
    yAxis: {type: "value", min: 0, max: 100, name: words.axis},
    series: [
      {name: words.success, type: "bar", data: data.success},
      {name: words.low, type: "line", data: data.low, symbol: "triangle", lineStyle: {opacity: 0}},
      {name: words.high, type: "line", data: data.high, symbol: "triangle", lineStyle: {opacity: 0}}
    ]
  });
})();
