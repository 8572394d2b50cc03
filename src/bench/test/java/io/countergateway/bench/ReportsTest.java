package io.countergateway.bench;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("the bench's reports")
class ReportsTest {
  private static StrategyResult row(String name, boolean durable, double rate, double p99) {
    return new StrategyResult(name, name + " title", durable, durable || !name.startsWith("plain")
      ? StrategyResult.Status.OK : StrategyResult.Status.NOT_CHECKED, 64, 20, (long) (rate * 20), rate, p99 / 4,
      p99, p99 * 3, 1000, 0, (long) (rate * 21), 0, 0, 400_000, 20_000, 2.5, 0, "ok: the counter", "");
  }

  static RunReport report(boolean readMix) {
    RunReport report = new RunReport(new BenchOptions().readMix(readMix), "java -jar x.jar bench", "PostgreSQL 15.20", 2,
      OffsetDateTime.parse("2026-01-02T03:04:05Z"));
    report.add(row("single-row", true, 1_800, 60));
    report.add(row("gateway-http", true, 100_000, 4));
    report.add(row("gateway-http-batch", true, 1_200_000, 9));
    report.add(row("gateway-bus", true, 900_000, 3));
    report.add(row("redis", false, 95_000, 1.5));
    report.add(row("plain-204", false, 127_000, 1));
    report.add(StrategyResult.notRun("ledger", "ledger title", true, StrategyResult.Status.ERROR, "boom"));
    return report;
  }

  @Test
  @DisplayName("the Markdown table has one row per strategy, marks non-durable ones and failures, and the targets")
  void markdown() {
    String markdown = MarkdownReport.render(report(true));

    assertThat(markdown).contains("| # | strategy | durable |", "reads/s", "read p99 ms", "PostgreSQL 15.20",
      "java -jar x.jar bench");
    assertThat(markdown).contains("| 2 | gateway-http title | yes | 64 | 100,000 | 1.00 | 4.00 | 12.0 |");
    assertThat(markdown).contains("| 5 | redis title | **no** |");
    assertThat(markdown).contains("**ERROR**", "**FAILED**");
    assertThat(markdown).contains("| T1 | gateway-http / plain-204 | 100,000 / 127,000 = 0.79 x | >= 0.75 x | yes |");
    assertThat(markdown).contains("| T1 | gateway-http / single-row UPDATE | 100,000 / 1,800 = 55.56 x | >= 50 x | yes |");
    assertThat(markdown).contains("| T2 |", "| T3 |", "| T5 | reads of the hot counter during gateway-http | 20,000 reads/s");
  }

  @Test
  @DisplayName("the JSON has the run's metadata, every row and the targets")
  void json() {
    JsonObject json = report(false).toJson();

    assertThat(json.getInteger("cores")).isEqualTo(2);
    assertThat(json.getJsonObject("database").getString("version")).isEqualTo("PostgreSQL 15.20");
    assertThat(json.getBoolean("passed")).isFalse();
    assertThat(json.getJsonArray("results")).hasSize(7);
    JsonObject gateway = json.getJsonArray("results").getJsonObject(1);
    assertThat(gateway.getString("name")).isEqualTo("gateway-http");
    assertThat(gateway.getDouble("incrementsPerSecond")).isEqualTo(100_000.0);
    assertThat(gateway.getJsonObject("latencyMs").getDouble("p99")).isEqualTo(4.0);
    assertThat(json.getJsonArray("targets").stream().map(t -> ((JsonObject) t).getString("id")))
      .contains("T1", "T2", "T3").doesNotContain("T5");
  }

  @Test
  @DisplayName("the chart is written as PNG or SVG by the file's extension")
  void chart(@TempDir Path dir) throws Exception {
    Path png = dir.resolve("bench.png");
    Path svg = dir.resolve("charts/bench.svg");

    BarChart.write(report(false), png);
    BarChart.write(report(false), svg);

    assertThat(Files.readAllBytes(png)).startsWith(new byte[] {(byte) 0x89, 'P', 'N', 'G'});
    assertThat(Files.readString(svg)).contains("<svg");
    assertThat(List.of(Files.size(png), Files.size(svg))).allMatch(size -> size > 1_000);
  }
}
