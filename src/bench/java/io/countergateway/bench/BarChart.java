package io.countergateway.bench;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.VectorGraphicsEncoder;
import org.knowm.xchart.style.Styler;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The results as a bar chart (XChart): increments/s per strategy on a logarithmic left axis, and beside each bar
 * its p99 latency on the right axis. PNG or SVG, by the file's extension.
 */
final class BarChart {
  private BarChart() {
  }

  static CategoryChart chart(RunReport report) {
    List<StrategyResult> rows = report.results().stream().filter(StrategyResult::measured)
      .filter(r -> r.incrementsPerSecond() > 0).toList();
    List<String> names = rows.stream().map(r -> r.durable() ? r.name() : r.name() + " *").toList();
    CategoryChart chart = new CategoryChartBuilder().width(1400).height(700)
      .title("counter-gateway bench: " + report.headline())
      .xAxisTitle("strategy (* = not durable)").yAxisTitle("increments/s (log scale)").build();
    Styler styler = chart.getStyler();
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    chart.getStyler().setXAxisLabelRotation(20);
    chart.getStyler().setLabelsVisible(true);
    chart.getStyler().setLabelsRotation(0);
    chart.getStyler().setDecimalPattern("#,##0.##");
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    styler.setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
    chart.setYAxisGroupTitle(0, "increments/s (log scale)");
    chart.setYAxisGroupTitle(1, "p99 latency, ms (log scale)");
    // bars start at the axis minimum: a power of ten below the smallest value, and one above the largest
    chart.getStyler().setYAxisMin(0, floorPow10(rows.stream().mapToDouble(StrategyResult::incrementsPerSecond).min().orElse(1)));
    chart.getStyler().setYAxisMax(0, ceilPow10(rows.stream().mapToDouble(StrategyResult::incrementsPerSecond).max().orElse(10)));
    chart.getStyler().setYAxisMin(1, floorPow10(rows.stream().mapToDouble(r -> Math.max(0.01, r.p99Ms())).min().orElse(0.01)));
    chart.getStyler().setYAxisMax(1, ceilPow10(rows.stream().mapToDouble(r -> Math.max(0.01, r.p99Ms())).max().orElse(1)));
    chart.addSeries("increments/s", names, rows.stream().map(r -> (Number) Math.rint(r.incrementsPerSecond())).toList())
      .setFillColor(new Color(0x2b, 0x6c, 0xb0));
    chart.addSeries("p99 latency (ms)", names, rows.stream().map(r -> (Number) Math.max(0.01, r.p99Ms())).toList())
      .setFillColor(new Color(0xe0, 0x8a, 0x2c)).setYAxisGroup(1);
    return chart;
  }

  /** Writes the chart to {@code file}: SVG for {@code .svg}, PNG otherwise. */
  static void write(RunReport report, Path file) throws IOException {
    System.setProperty("java.awt.headless", "true");
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    CategoryChart chart = chart(report);
    String path = file.toString();
    if (path.toLowerCase(Locale.ROOT).endsWith(".svg")) {
      VectorGraphicsEncoder.saveVectorGraphic(chart, stripExtension(path, ".svg"), VectorGraphicsEncoder.VectorGraphicsFormat.SVG);
    } else {
      BitmapEncoder.saveBitmap(chart, stripExtension(path, ".png"), BitmapEncoder.BitmapFormat.PNG);
    }
  }

  private static double floorPow10(double value) {
    return Math.pow(10, Math.floor(Math.log10(value)));
  }

  private static double ceilPow10(double value) {
    return Math.pow(10, Math.ceil(Math.log10(value) + 1e-9));
  }

  /** XChart appends the extension itself. */
  private static String stripExtension(String path, String extension) {
    return path.toLowerCase(Locale.ROOT).endsWith(extension) ? path.substring(0, path.length() - extension.length()) : path;
  }
}
