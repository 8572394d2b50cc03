package io.countergateway.bench;

import io.countergateway.internal.beacon.UserAgentFilterCommand;
import io.countergateway.internal.store.FlushStatementCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code java -jar target/counter-gateway-bench.jar} (built by {@code mvn -Pbench package}): every counting strategy
 * against one database, one after another, with the same writers and duration; prints a Markdown table, optionally
 * writes JSON and a chart. Exit code 1 when a strategy reads back a wrong value or fails. The benchmark's own jar,
 * not a subcommand of the gateway's, so that its chart, Redis and histogram libraries stay out of the product.
 */
@Command(name = "counter-gateway-bench", mixinStandardHelpOptions = true, sortOptions = false,
  subcommands = {PlainServerCommand.class, LatencyProxyCommand.class, ProfileSharesCommand.class,
    FlushStatementCommand.class, DurableWriteCommand.class, UserAgentFilterCommand.class},
  description = {"Measures hand-written counting strategies, the gateway (HTTP and event bus) and Redis side by side "
    + "on one database, and checks that every one counted correctly.",
    "Strategies: " + "single-row, multi-row, slotted, skip-locked, ledger, gateway-http, gateway-http-batch, "
      + "gateway-bus, gateway-bus-batch, gateway-bus-accepted, redis, plain-204."},
  exitCodeListHeading = "Exit codes:%n",
  exitCodeList = {"0:every strategy counted correctly (or was skipped)", "1:a value read back was wrong, or a strategy failed",
    "2:invalid options"})
public final class BenchCommand implements Callable<Integer> {
  @Spec
  private CommandLine.Model.CommandSpec spec;

  @Option(names = "--db", description = "postgres or mysql (MariaDB too); default: ${DEFAULT-VALUE}", defaultValue = "postgres")
  private String db;

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "database host (default: ${DEFAULT-VALUE})")
  private String host;

  @Option(names = "--port", description = "database port (default: 5432 or 3306)")
  private int port;

  @Option(names = "--user", description = "database user (default: postgres or root)")
  private String user;

  @Option(names = "--password", defaultValue = "${env:CG_BENCH_PASSWORD:-}",
    description = "database password (default: $CG_BENCH_PASSWORD, else empty)")
  private String password;

  @Option(names = "--database", defaultValue = "test", description = "database name (default: ${DEFAULT-VALUE})")
  private String database;

  @Option(names = "--concurrency", defaultValue = "64", description = "writers, one increment in flight each (default: ${DEFAULT-VALUE})")
  private int concurrency;

  @Option(names = "--duration", defaultValue = "20s", converter = DurationConverter.class,
    description = "measured time per strategy, e.g. 20s, 1500ms, 1m (default: ${DEFAULT-VALUE})")
  private Duration duration;

  @Option(names = "--warmup", defaultValue = "2s", converter = DurationConverter.class,
    description = "unmeasured run-in per strategy (default: ${DEFAULT-VALUE})")
  private Duration warmup;

  @Option(names = "--counters", defaultValue = "1", description = "distinct counters, picked uniformly (default: ${DEFAULT-VALUE}: one hot counter)")
  private int counters;

  @Option(names = "--slots", defaultValue = "100", description = "rows per counter of multi-row, slotted, skip-locked (default: ${DEFAULT-VALUE})")
  private int slots;

  @Option(names = "--read-mix", description = "readers read counter 0 while the writers write; reports reads/s and read p99")
  private boolean readMix;

  @Option(names = "--readers", defaultValue = "16", description = "readers with --read-mix (default: ${DEFAULT-VALUE})")
  private int readers;

  @Option(names = "--strategies", split = ",", paramLabel = "NAME",
    description = "comma-separated subset, in run order (default: all)")
  private List<String> strategies;

  @Option(names = "--redis", defaultValue = "redis://127.0.0.1:6379", description = "Redis for the reference row (default: ${DEFAULT-VALUE})")
  private String redis;

  @Option(names = "--bus-window", defaultValue = "1",
    description = "increments each gateway-bus writer keeps in flight (default: ${DEFAULT-VALUE})")
  private int busWindow;

  @Option(names = "--batch-size", defaultValue = "100", description = "increments per gateway-http-batch request and gateway-bus-batch message (default: ${DEFAULT-VALUE})")
  private int batchSize;

  @Option(names = "--fold-interval", defaultValue = "1s", converter = DurationConverter.class,
    description = "how often the ledger is folded (default: ${DEFAULT-VALUE})")
  private Duration foldInterval;

  @Option(names = "--gateway-slots", defaultValue = "16", description = "slots of the gateway's bench namespace (default: ${DEFAULT-VALUE})")
  private int gatewaySlots;

  @Option(names = "--gateway", paramLabel = "KEY=VALUE", mapFallbackValue = "",
    description = "override a key of the gateway's config for the gateway strategies, e.g. --gateway batching.maxInFlight=2 "
      + "--gateway http.instances=2 (repeatable)")
  private Map<String, String> gatewaySettings = new LinkedHashMap<>();

  @Option(names = "--json", paramLabel = "FILE", description = "also write the results as JSON")
  private Path json;

  @Option(names = "--chart", paramLabel = "FILE", description = "also write a bar chart, .png or .svg")
  private Path chart;

  public static void main(String[] args) {
    System.exit(new CommandLine(new BenchCommand()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    BenchOptions options;
    try {
      options = new BenchOptions().dialect(Dialect.parse(db)).host(host).port(port).user(user).password(password)
        .database(database).concurrency(concurrency).duration(duration).warmup(warmup).counters(counters)
        .slots(slots).readMix(readMix).readers(readers).redisUri(redis).busWindow(busWindow).batchSize(batchSize)
        .foldInterval(foldInterval).gatewaySlots(gatewaySlots).gatewaySettings(gatewaySettings).json(json).chart(chart);
      if (strategies != null && !strategies.isEmpty()) {
        options.strategies(strategies.stream().map(s -> s.trim().toLowerCase(Locale.ROOT)).toList());
      }
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    return run(options, commandLine(), spec.commandLine().getOut());
  }

  /** Runs the bench and prints/writes its results; returns the exit code. */
  public static int run(BenchOptions options, String commandLine, PrintWriter out) throws Exception {
    RunReport report;
    try (BenchRunner runner = new BenchRunner(options)) {
      report = runner.run(commandLine);
    }
    out.print(MarkdownReport.render(report));
    out.flush();
    if (options.json() != null) {
      Path parent = options.json().toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(options.json(), report.toJson().encodePrettily() + "\n", StandardCharsets.UTF_8);
    }
    if (options.chart() != null) {
      BarChart.write(report, options.chart());
    }
    return report.passed() ? 0 : 1;
  }

  /** The command as typed, without the password. */
  private String commandLine() {
    StringBuilder line = new StringBuilder("java -jar target/counter-gateway-bench.jar");
    List<String> args = spec.commandLine().getParseResult().originalArgs();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.startsWith("--password")) {
        line.append(arg.contains("=") ? " --password=***" : " --password ***");
        i += arg.contains("=") ? 0 : 1;
        continue;
      }
      line.append(' ').append(arg);
    }
    return line.toString();
  }

  /** {@code 20s}, {@code 1500ms}, {@code 2m}, or a number of seconds. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      String v = value.trim().toLowerCase(Locale.ROOT);
      try {
        if (v.endsWith("ms")) {
          return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
        }
        if (v.endsWith("s")) {
          return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
        }
        if (v.endsWith("m")) {
          return Duration.ofMillis(Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60_000));
        }
        return Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a duration like 20s, 1500ms or 1m");
      }
    }
  }
}
