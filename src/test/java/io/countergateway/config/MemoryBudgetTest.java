package io.countergateway.config;

import io.countergateway.config.MemoryBounds.Bound;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("The memory bounds: derived from the heap, all full at once within 75 % of it")
class MemoryBudgetTest {
  private static final long MIB = 1024 * 1024;
  /** The 2-CPU container the manifests run: 2 ingest verticles, Vert.x's 2 event loops per core. */
  private static final int INGEST_VERTICLES = 2;
  private static final int EVENT_LOOPS = 4;

  @AfterEach
  void clearKnobs() {
    System.clearProperty(Knobs.PREFIX + Bound.PENDING_KEYS.label());
  }

  @Test
  @DisplayName("the shares of the bounds add up to the whole of the holders' part of the heap")
  void sharesAddUp() {
    assertThat(MemoryBudget.SHARES.keySet()).containsExactlyInAnyOrder(Bound.values());
    assertThat(MemoryBudget.SHARES.values().stream().mapToDouble(Double::doubleValue).sum()).isCloseTo(1.0,
      org.assertj.core.data.Offset.offset(1e-9));
  }

  @ParameterizedTest(name = "{0} MiB heap, {1} cores")
  @CsvSource({"247, 2", "247, 1", "990, 2", "990, 12", "990, 24", "4000, 64", "128, 2"})
  @DisplayName("conf/gateway.yaml's derived bounds, all full at once, fit the heap they were derived from")
  void derivedBoundsFit(long heapMib, int cores) throws IOException {
    Machine machine = Machine.of(maxMemoryOfSerial(heapMib * MIB), cores);
    GatewayConfig config = load("conf/gateway.yaml", machine);
    MemoryBudget budget = MemoryBudget.of(config, cores, machine.eventLoops());

    assertThat(budget.fits(machine.maxHeapBytes())).as("worst case %d MiB of a %d MiB heap",
      budget.worstCaseBytes() / MIB, machine.maxHeapBytes() / MIB).isTrue();
    assertThatCode(() -> budget.requireFits(machine.maxHeapBytes())).doesNotThrowAnyException();
  }

  @Test
  @DisplayName("in the containers' heap on 2 cores the bounds are what docs/operations.md \"Sizing\" states")
  void containerBounds() throws IOException {
    MemoryBounds bounds = load("conf/gateway.yaml", containerMachine()).getMemoryBounds();

    assertThat(bounds.maxPendingKeys()).isBetween(30_000, 45_000);
    assertThat(bounds.maxWaitingRequests()).isBetween(20_000, 30_000);
    assertThat(bounds.maxBodyBytesInFlight()).isBetween(24 * (int) MIB, 32 * (int) MIB);
    assertThat(bounds.maxConnections()).isBetween(3_000, 4_000);
    assertThat(bounds.maxIdempotentInFlight()).isBetween(7_000, 10_000);
    assertThat(bounds.maxTrackedClients()).isBetween(60_000, 80_000);
    assertThat(bounds.maxKnownIds()).isBetween(400_000, 550_000);
    assertThat(bounds.userAgentCacheBytes()).isBetween(2 * (int) MIB, 3 * (int) MIB);
    assertThat(bounds.maxPendingSketches()).isBetween(1_500, 2_000);
    assertThat(bounds.readCacheMaxCounters()).isBetween(20_000, 30_000);
  }

  @Test
  @DisplayName("a larger heap holds more, more ingest verticles share what one would hold")
  void scaleWithHeapAndCores() throws IOException {
    MemoryBounds small = load("conf/gateway.yaml", Machine.of(256 * MIB, 2)).getMemoryBounds();
    MemoryBounds large = load("conf/gateway.yaml", Machine.of(1024 * MIB, 2)).getMemoryBounds();
    MemoryBounds manyCores = load("conf/gateway.yaml", Machine.of(1024 * MIB, 8)).getMemoryBounds();

    assertThat(large.maxConnections()).isBetween(4 * small.maxConnections() - 4, 4 * small.maxConnections() + 4);
    assertThat(manyCores.maxPendingKeys()).isBetween(large.maxPendingKeys() / 4 - 1, large.maxPendingKeys() / 4 + 1);
    assertThat(manyCores.maxConnections()).isEqualTo(large.maxConnections());
  }

  @Test
  @DisplayName("a coalescer always takes a whole batch: the pending and waiting bounds never fall below limits.maxBatchIncrements")
  void batchesFit() {
    JsonObject raw = minimal().put("limits", new JsonObject().put("maxBatchIncrements", 50_000));
    MemoryBounds bounds = GatewayConfig.fromJson(raw, Machine.of(256 * MIB, 2)).getMemoryBounds();

    assertThat(bounds.maxPendingKeys()).isEqualTo(50_000);
    assertThat(bounds.maxWaitingRequests()).isEqualTo(50_000);
    assertThat(bounds.setBy(Bound.WAITING_REQUESTS)).isEqualTo("limits.maxBatchIncrements");
  }

  @Test
  @DisplayName("conf/kubernetes.yaml's bounds fit the heap the StatefulSet's memory limit gives")
  void kubernetesFitsItsHeap() throws IOException {
    JsonObject raw = yaml("conf/kubernetes.yaml");
    // the Secrets are not mounted here
    raw.put("auth", new JsonObject().put("anonymous", true));
    raw.getJsonObject("database").remove("passwordFile");
    MemoryBudget budget = MemoryBudget.of(GatewayConfig.fromJson(raw, containerMachine()), INGEST_VERTICLES, EVENT_LOOPS);

    assertThat(budget.fits(containerMachine().maxHeapBytes())).as("worst case %d MiB", budget.worstCaseBytes() / MIB)
      .isTrue();
  }

  @Test
  @DisplayName("a bound set past the heap is refused, naming the total, the heap, the largest holders and the key to lower")
  void tooLargeIsRefused() {
    JsonObject raw = minimal().put("limits", new JsonObject().put("maxConnections", 100_000));
    MemoryBudget budget = MemoryBudget.of(GatewayConfig.fromJson(raw, Machine.of(256 * MIB, 2)), INGEST_VERTICLES,
      EVENT_LOOPS);

    assertThatThrownBy(() -> budget.requireFits(256 * MIB))
      .isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("limits.maxConnections: the bounded holders full at once would take ")
      .hasMessageContaining("more than 75 % of the maximum heap of 256 MiB")
      .hasMessageContaining("the largest: limits.maxConnections (open connections) 781 MiB, ")
      .hasMessageContaining("pending deltas (derived from the heap) × 2 ingest verticles")
      .hasMessageContaining("raise -Xmx")
      .hasMessageContaining("or lower limits.maxConnections")
      .hasMessageNotContaining("\n");
  }

  @Test
  @DisplayName("a test pins a bound with its knob, and the refusal names the knob")
  void knobPinsABound() {
    System.setProperty(Knobs.PREFIX + "batching.maxPendingKeys", "2000000");
    GatewayConfig config = GatewayConfig.fromJson(minimal(), Machine.of(256 * MIB, 2));

    assertThat(config.getMemoryBounds().maxPendingKeys()).isEqualTo(2_000_000);
    assertThatThrownBy(() -> MemoryBudget.of(config, INGEST_VERTICLES, EVENT_LOOPS).requireFits(256 * MIB))
      .hasMessageStartingWith("-Dcountergateway.batching.maxPendingKeys: the bounded holders full at once");
  }

  @Test
  @DisplayName("only the holders a configuration fills are counted: no beacons, no uniques, no read cache")
  void onlyWhatIsUsed() {
    MemoryBudget budget = MemoryBudget.of(GatewayConfig.fromJson(minimal()), 1, 2);

    assertThat(budget.holders()).extracting(MemoryBudget.Holder::name)
      .doesNotContain("per-client beacon limits", "user-agent verdicts", "unique-visitor sketches", "read cache");
  }

  @Test
  @DisplayName("the bounds that were keys are refused as keys, saying they are derived from the heap")
  void formerKeysAreRefused() {
    JsonObject raw = minimal().put("batching", new JsonObject().put("maxPendingKeys", 300));
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw))
      .hasMessage("batching.maxPendingKeys: is no longer a key: derived from the heap (docs/operations.md \"Sizing\")");
  }

  private static JsonObject minimal() {
    return new JsonObject().put("namespaces", new JsonObject().put("likes", new JsonObject()));
  }

  /** The heap of the StatefulSet's memory limit times its -XX:MaxRAMPercentage, as Serial reports it, on 2 cores. */
  private static Machine containerMachine() throws IOException {
    String statefulSet = Files.readString(Path.of("k8s/base/statefulset.yaml"));
    long limit = Long.parseLong(find(statefulSet, "limits:\\s+(?:cpu: \\S+\\s+)?memory: (\\d+)Mi")) * MIB;
    long percent = Long.parseLong(find(statefulSet, "-XX:MaxRAMPercentage=(\\d+)"));
    return Machine.of(maxMemoryOfSerial(limit * percent / 100), INGEST_VERTICLES);
  }

  /** Serial's maximum heap leaves one survivor space out: young = a third of -Xmx, a survivor a tenth of young. */
  private static long maxMemoryOfSerial(long xmx) {
    return xmx - xmx / 30;
  }

  private static GatewayConfig load(String file, Machine machine) throws IOException {
    return GatewayConfig.fromJson(yaml(file), machine);
  }

  private static JsonObject yaml(String file) throws IOException {
    Map<String, Object> tree = new Yaml().load(Files.readString(Path.of(file)));
    return new JsonObject(tree);
  }

  private static String find(String text, String regex) {
    Matcher matcher = Pattern.compile(regex).matcher(text);
    assertThat(matcher.find()).as(regex).isTrue();
    return matcher.group(1);
  }
}
