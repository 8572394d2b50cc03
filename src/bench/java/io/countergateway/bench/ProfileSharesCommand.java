package io.countergateway.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code java -jar target/counter-gateway-bench.jar profile-shares plain=plain.collapsed beacon=beacon.collapsed
 * --cpu plain=9.3 --cpu beacon=15.5}: a Markdown table of where each profile's CPU went ({@link ProfileShares.Part}),
 * as a share of its samples and, given the process's CPU per request, in microseconds per request.
 */
@Command(name = "profile-shares", mixinStandardHelpOptions = true, sortOptions = false,
  description = "Reads CPU profiles as collapsed stacks (async-profiler's collapsed output) and prints where each one's "
    + "samples went: HTTP parsing, routing, the bot filter and limits, metrics, the journal, the coalescer, the SQL "
    + "client, and the rest, as shares and as CPU microseconds per request.")
public final class ProfileSharesCommand implements Callable<Integer> {
  @Spec
  private CommandLine.Model.CommandSpec spec;

  @Parameters(paramLabel = "NAME=FILE", description = "a profile's column name and its collapsed-stack file, in column order")
  private List<String> profiles = new ArrayList<>();

  @Option(names = "--cpu", paramLabel = "NAME=MICROS",
    description = "the profiled process's CPU microseconds per request during the profile (repeatable)")
  private Map<String, Double> cpuPerRequest = new LinkedHashMap<>();

  @Option(names = "--inclusive", paramLabel = "LABEL=FRAME",
    description = "also the share of samples with a frame containing FRAME anywhere in their stack (repeatable), "
      + "e.g. --inclusive 'per-request timer=HttpRouteMeters.record'")
  private Map<String, String> inclusive = new LinkedHashMap<>();

  @Option(names = "--top", defaultValue = "12", description = "leaf frames listed per profile (default: ${DEFAULT-VALUE})")
  private int top;

  @Override
  public Integer call() throws Exception {
    Map<String, Path> files = new LinkedHashMap<>();
    for (String profile : profiles) {
      int eq = profile.indexOf('=');
      if (eq <= 0 || !Files.isRegularFile(Path.of(profile.substring(eq + 1)))) {
        throw new CommandLine.ParameterException(spec.commandLine(), "expected NAME=FILE of an existing file, got '"
          + profile + "'");
      }
      files.put(profile.substring(0, eq), Path.of(profile.substring(eq + 1)));
    }
    Map<String, ProfileShares> shares = new LinkedHashMap<>();
    for (Map.Entry<String, Path> file : files.entrySet()) {
      shares.put(file.getKey(), ProfileShares.read(file.getValue()));
    }
    PrintWriter out = spec.commandLine().getOut();
    out.print(render(shares, cpuPerRequest));
    // kinds of thread by their largest share in any profile, so the journal's writer is not listed under a dozen
    // idle JVM threads because the first profile (the plain server) has none
    Map<String, Double> largest = new LinkedHashMap<>();
    shares.values().forEach(profile -> profile.threadShares().forEach((kind, share) -> largest.merge(kind, share, Math::max)));
    List<String> threadKinds = largest.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
      .map(Map.Entry::getKey).toList();
    if (!threadKinds.isEmpty()) {
      out.println();
      out.println("By thread (every thread of a pool together):");
      out.println();
      header(out, "thread", files.keySet());
      for (String kind : threadKinds) {
        StringBuilder line = new StringBuilder("| `" + kind + "` |");
        for (Map.Entry<String, ProfileShares> profile : shares.entrySet()) {
          double share = profile.getValue().threadShares().getOrDefault(kind, 0.0);
          line.append(' ').append(cell(share, cpuPerRequest.get(profile.getKey()))).append(" |");
        }
        out.println(line);
      }
    }
    if (!inclusive.isEmpty()) {
      out.println();
      out.println("Inclusive (every sample with the frame anywhere in its stack):");
      out.println();
      header(out, "frame", files.keySet());
      for (Map.Entry<String, String> row : inclusive.entrySet()) {
        StringBuilder line = new StringBuilder("| " + row.getKey() + " (`" + row.getValue() + "`) |");
        for (Map.Entry<String, Path> file : files.entrySet()) {
          double share = ProfileShares.inclusiveShare(file.getValue(), row.getValue());
          line.append(' ').append(cell(share, cpuPerRequest.get(file.getKey()))).append(" |");
        }
        out.println(line);
      }
    }
    for (Map.Entry<String, ProfileShares> profile : shares.entrySet()) {
      out.println();
      out.println("Top leaf frames, " + profile.getKey() + ":");
      out.println();
      out.println("| frame | share |");
      out.println("|---|---:|");
      for (Map.Entry<String, Double> leaf : profile.getValue().topLeaves(top)) {
        out.println("| `" + leaf.getKey().replace("|", "\\|") + "` | " + ProfileShares.percent(leaf.getValue()) + " |");
      }
    }
    out.flush();
    return 0;
  }

  /** The table of parts: a row per part, a column per profile. */
  static String render(Map<String, ProfileShares> shares, Map<String, Double> cpuPerRequest) {
    StringWriter text = new StringWriter();
    PrintWriter table = new PrintWriter(text);
    header(table, "part", shares.keySet());
    for (ProfileShares.Part part : ProfileShares.Part.values()) {
      StringBuilder line = new StringBuilder("| " + part.title + " |");
      for (Map.Entry<String, ProfileShares> profile : shares.entrySet()) {
        line.append(' ').append(cell(profile.getValue().share(part), cpuPerRequest.get(profile.getKey()))).append(" |");
      }
      table.println(line);
    }
    StringBuilder samples = new StringBuilder("| samples |");
    StringBuilder cpu = new StringBuilder("| process CPU µs per request (all parts) |");
    for (Map.Entry<String, ProfileShares> profile : shares.entrySet()) {
      samples.append(' ').append(profile.getValue().total()).append(" |");
      Double micros = cpuPerRequest.get(profile.getKey());
      cpu.append(' ').append(micros == null ? "" : String.format(Locale.ROOT, "%.1f", micros)).append(" |");
    }
    table.println(samples);
    table.println(cpu);
    table.flush();
    return text.toString();
  }

  private static void header(PrintWriter out, String first, Iterable<String> names) {
    StringBuilder head = new StringBuilder("| " + first + " |");
    StringBuilder rule = new StringBuilder("|---|");
    for (String name : names) {
      head.append(' ').append(name).append(" |");
      rule.append("---:|");
    }
    out.println(head);
    out.println(rule);
  }

  /** {@code 12.3 % (1.9 µs)}, or the share alone without the CPU per request. */
  private static String cell(double share, Double cpuMicros) {
    return cpuMicros == null ? ProfileShares.percent(share)
      : ProfileShares.percent(share) + String.format(Locale.ROOT, " (%.2f µs)", share * cpuMicros);
  }
}
