/* The leaderboard's chart: success per agent with its interval. */
"use strict";
(function () {
  if (!window.echarts) { return; }
  var data = JSON.parse(document.getElementById("board-data").textContent);
  var chart = echarts.init(document.getElementById("board-chart"));
  chart.setOption({
    tooltip: {trigger: "axis"},
    /* the page's font stack, Chinese faces included: labels may be Chinese */
    textStyle: {fontFamily: getComputedStyle(document.body).fontFamily},
    grid: {left: 50, right: 20, bottom: 80},
    xAxis: {type: "category", data: data.agents, axisLabel: {rotate: 20}},
    yAxis: {type: "value", min: 0, max: 100, name: "success %"},
    series: [
      {name: "success", type: "bar", data: data.success},
      {name: "interval low", type: "line", data: data.low, symbol: "triangle", lineStyle: {opacity: 0}},
      {name: "interval high", type: "line", data: data.high, symbol: "triangle", lineStyle: {opacity: 0}}
    ]
  });
})();
