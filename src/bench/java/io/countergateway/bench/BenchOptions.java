package io.countergateway.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Everything one bench run needs; filled by {@link BenchCommand} or directly by tests. */
public final class BenchOptions {
  private Dialect dialect = Dialect.POSTGRES;
  private String host = "127.0.0.1";
  private int port;
  private String user;
  private String password = "";
  private String database = "test";
  private int concurrency = 64;
  private Duration duration = Duration.ofSeconds(20);
  private Duration warmup = Duration.ofSeconds(2);
  private int counters = 1;
  private int slots = 100;
  private int maxPreCreatedRows = 1_000_000;
  private boolean readMix;
  private int readers = 16;
  private List<String> strategies = Strategies.DEFAULT;
  private String redisUri = "redis://127.0.0.1:6379";
  private int busWindow = 1;
  private int batchSize = 100;
  private Duration foldInterval = Duration.ofSeconds(1);
  private int gatewaySlots = 16;
  private Map<String, String> gatewaySettings = Map.of();
  private Path json;
  private Path chart;

  public Dialect dialect() {
    return dialect;
  }

  public BenchOptions dialect(Dialect dialect) {
    this.dialect = dialect;
    return this;
  }

  public String host() {
    return host;
  }

  public BenchOptions host(String host) {
    this.host = host;
    return this;
  }

  /** The port given, or the dialect's default one. */
  public int port() {
    return port > 0 ? port : dialect.defaultPort();
  }

  public BenchOptions port(int port) {
    this.port = port;
    return this;
  }

  public String user() {
    return user != null ? user : dialect.defaultUser();
  }

  public BenchOptions user(String user) {
    this.user = user;
    return this;
  }

  public String password() {
    return password;
  }

  public BenchOptions password(String password) {
    this.password = password == null ? "" : password;
    return this;
  }

  public String database() {
    return database;
  }

  public BenchOptions database(String database) {
    this.database = database;
    return this;
  }

  /** Writers, the same for every strategy: each keeps one increment in flight. */
  public int concurrency() {
    return concurrency;
  }

  public BenchOptions concurrency(int concurrency) {
    this.concurrency = positive("concurrency", concurrency);
    return this;
  }

  public Duration duration() {
    return duration;
  }

  public BenchOptions duration(Duration duration) {
    this.duration = duration;
    return this;
  }

  /** Writers run this long before the measured window opens; their increments are still checked. */
  public Duration warmup() {
    return warmup;
  }

  public BenchOptions warmup(Duration warmup) {
    this.warmup = warmup;
    return this;
  }

  /** Distinct counters, chosen uniformly at random per increment; counter 0 is the one readers read. */
  public int counters() {
    return counters;
  }

  public BenchOptions counters(int counters) {
    this.counters = positive("counters", counters);
    return this;
  }

  /** Rows per counter for the multi-row, slotted and SKIP LOCKED strategies. */
  public int slots() {
    return slots;
  }

  public BenchOptions slots(int slots) {
    this.slots = positive("slots", slots);
    return this;
  }

  /** Cap on the rows a strategy seeds before it starts (multi-row has counters x slots of them). */
  public int maxPreCreatedRows() {
    return maxPreCreatedRows;
  }

  public BenchOptions maxPreCreatedRows(int maxPreCreatedRows) {
    this.maxPreCreatedRows = positive("maxPreCreatedRows", maxPreCreatedRows);
    return this;
  }

  public boolean readMix() {
    return readMix;
  }

  public BenchOptions readMix(boolean readMix) {
    this.readMix = readMix;
    return this;
  }

  public int readers() {
    return readers;
  }

  public BenchOptions readers(int readers) {
    this.readers = positive("readers", readers);
    return this;
  }

  public List<String> strategies() {
    return strategies;
  }

  public BenchOptions strategies(List<String> strategies) {
    for (String name : strategies) {
      Strategies.check(name);
    }
    this.strategies = List.copyOf(strategies);
    return this;
  }

  public String redisUri() {
    return redisUri;
  }

  public BenchOptions redisUri(String redisUri) {
    this.redisUri = redisUri;
    return this;
  }

  /** Increments each writer of the event-bus strategy keeps in flight (1 = the same load as the others). */
  public int busWindow() {
    return busWindow;
  }

  public BenchOptions busWindow(int busWindow) {
    this.busWindow = positive("busWindow", busWindow);
    return this;
  }

  /** Increments per request of the gateway-http-batch strategy. */
  public int batchSize() {
    return batchSize;
  }

  public BenchOptions batchSize(int batchSize) {
    this.batchSize = positive("batchSize", batchSize);
    return this;
  }

  /** How often the ledger strategy folds its rows into totals. */
  public Duration foldInterval() {
    return foldInterval;
  }

  public BenchOptions foldInterval(Duration foldInterval) {
    this.foldInterval = foldInterval;
    return this;
  }

  /** {@code slots} of the gateway's bench namespace. */
  public int gatewaySlots() {
    return gatewaySlots;
  }

  public BenchOptions gatewaySlots(int gatewaySlots) {
    this.gatewaySlots = positive("gatewaySlots", gatewaySlots);
    return this;
  }

  /** Overrides of the gateway's config for the gateway strategies, by dotted key ({@code batching.maxInFlight}). */
  public Map<String, String> gatewaySettings() {
    return gatewaySettings;
  }

  public BenchOptions gatewaySettings(Map<String, String> gatewaySettings) {
    this.gatewaySettings = Map.copyOf(gatewaySettings);
    return this;
  }

  public Path json() {
    return json;
  }

  public BenchOptions json(Path json) {
    this.json = json;
    return this;
  }

  public Path chart() {
    return chart;
  }

  public BenchOptions chart(Path chart) {
    this.chart = chart;
    return this;
  }

  private static int positive(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, got " + value);
    }
    return value;
  }
}
