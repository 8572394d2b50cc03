package io.countergateway.bench;

import java.util.List;

/** The results as a Markdown table, with the checks and the targets of src/DESIGN.md §7 below it. */
final class MarkdownReport {
  private MarkdownReport() {
  }

  static String render(RunReport report) {
    boolean reads = report.options().readMix();
    StringBuilder out = new StringBuilder();
    out.append("### counter-gateway bench: ").append(report.headline()).append("\n\n");
    out.append("- database: ").append(report.databaseVersion()).append('\n');
    out.append("- machine: ").append(report.cores()).append(" cores, ").append(System.getProperty("java.vm.name"))
      .append(' ').append(System.getProperty("java.version")).append(", ").append(report.date()).append('\n');
    if (!report.options().gatewaySettings().isEmpty()) {
      out.append("- gateway config overrides: ").append(report.options().gatewaySettings()).append('\n');
    }
    if (report.commandLine() != null) {
      out.append("- command: `").append(report.commandLine()).append("`\n");
    }
    out.append('\n');
    out.append("| # | strategy | durable | writers | incr/s | p50 ms | p99 ms | max ms | statements | incr/stmt | failed | unknown | correct |");
    out.append(reads ? " reads/s | read p99 ms |\n" : "\n");
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    out.append(reads ? "---:|---:|\n" : "\n");
    List<StrategyResult> results = report.results();
    for (int i = 0; i < results.size(); i++) {
      StrategyResult r = results.get(i);
      out.append("| ").append(i + 1).append(" | ").append(r.title()).append(" | ").append(r.durable() ? "yes" : "**no**");
      if (r.measured()) {
        out.append(" | ").append(r.writers())
          .append(" | ").append(String.format("%,.0f", r.incrementsPerSecond()))
          .append(" | ").append(String.format("%.2f", r.p50Ms()))
          .append(" | ").append(String.format("%.2f", r.p99Ms()))
          .append(" | ").append(String.format("%.1f", r.maxMs()))
          .append(" | ").append(String.format("%,d", r.writeStatements()))
          .append(" | ").append(r.writeStatements() == 0 ? "–" : String.format("%,.1f", r.incrementsPerStatement()))
          .append(" | ").append(String.format("%,d", r.failed()))
          .append(" | ").append(String.format("%,d", r.unknown()))
          .append(" | ").append(verdict(r));
        if (reads) {
          out.append(" | ").append(r.reads() == 0 ? "–" : String.format("%,.0f", r.readsPerSecond()))
            .append(" | ").append(r.reads() == 0 ? "–" : String.format("%.2f", r.readP99Ms()));
        }
      } else {
        out.append(" | – | – | – | – | – | – | – | – | – | ").append(verdict(r));
        if (reads) {
          out.append(" | – | –");
        }
      }
      out.append(" |\n");
    }
    out.append("\nincr/s and latency count increments acknowledged inside the measured window (latency of the request that "
      + "carried them: a batch request carries ").append(report.options().batchSize()).append("); statements are the SQL "
      + "statements the clients sent in the window, plain reads and BEGIN/COMMIT not counted (skip-locked, the MySQL "
      + "ledger fold and the gateway's MySQL flush are explicit transactions); Redis counts commands. "
      + "Non-durable rows are references, not contenders.\n\n");
    for (int i = 0; i < results.size(); i++) {
      StrategyResult r = results.get(i);
      out.append(i + 1).append(". ").append(r.name()).append(": ").append(r.check());
      if (r.note() != null && !r.note().isEmpty()) {
        out.append(" (").append(r.note()).append(')');
      }
      out.append('\n');
    }
    List<Targets.Target> targets = Targets.of(report);
    if (!targets.isEmpty()) {
      out.append("\n| target | what | measured | asked | met |\n|---|---|---|---|---|\n");
      for (Targets.Target t : targets) {
        out.append("| ").append(t.id()).append(" | ").append(t.what()).append(" | ").append(t.measured())
          .append(" | ").append(t.target()).append(" | ").append(t.met() ? "yes" : "**no**").append(" |\n");
      }
    }
    out.append('\n').append(report.passed() ? "All checks passed." : "**FAILED**: a strategy did not count correctly or did not run.")
      .append('\n');
    return out.toString();
  }

  private static String verdict(StrategyResult r) {
    return switch (r.status()) {
      case OK -> "ok";
      case NOT_CHECKED -> "n/a";
      case SKIPPED -> "skipped";
      case MISMATCH -> "**MISMATCH**";
      case ERROR -> "**ERROR**";
    };
  }
}
