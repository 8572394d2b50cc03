package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThatCode;

class MemoryBudgetTest {
  private static final long MIB = 1024 * 1024;
  /** The 2-CPU container the defaults are sized for: 2 ingest verticles, Vert.x's 2 event loops per core. */
  private static final int INGEST_VERTICLES = 2;
  private static final int EVENT_LOOPS = 4;

  @Test
  @DisplayName("conf/gateway.yaml's bounds, all full at once, fit the heap conf/jvm.options gives")
  void defaultsFitTheDefaultHeap() throws IOException {
    MemoryBudget budget = MemoryBudget.of(load("conf/gateway.yaml"), INGEST_VERTICLES, EVENT_LOOPS);
    long maxHeap = maxMemoryOfSerial(jvmOptionsMaxHeap());

    assertThat(budget.fits(maxHeap)).as("worst case %d MiB, max heap %d MiB", budget.worstCaseBytes() / MIB,
      maxHeap / MIB).isTrue();
    assertThatCode(() -> budget.requireFits(maxHeap)).doesNotThrowAnyException();
  }

  @Test
  @DisplayName("the run command starts with conf/gateway.yaml on a 12-core workstation too (an ingest verticle per core)")
  void defaultsFitTheDefaultHeapOnTwelveCores() throws IOException {
    MemoryBudget budget = MemoryBudget.of(load("conf/gateway.yaml"), 12, 24);

    assertThat(budget.fits(maxMemoryOfSerial(jvmOptionsMaxHeap()))).as("worst case %d MiB",
      budget.worstCaseBytes() / MIB).isTrue();
  }

  @Test
  @DisplayName("conf/kubernetes.yaml's bounds fit the heap the StatefulSet's memory limit gives")
  void kubernetesFitsItsHeap() throws IOException {
    JsonObject raw = yaml("conf/kubernetes.yaml");
    // the Secrets are not mounted here
    raw.put("auth", new JsonObject().put("anonymous", true));
    raw.getJsonObject("database").remove("passwordFile");
    MemoryBudget budget = MemoryBudget.of(GatewayConfig.fromJson(raw), INGEST_VERTICLES, EVENT_LOOPS);

    String statefulSet = Files.readString(Path.of("k8s/base/statefulset.yaml"));
    long limit = Long.parseLong(find(statefulSet, "limits:\\s+(?:cpu: \\S+\\s+)?memory: (\\d+)Mi")) * MIB;
    long percent = Long.parseLong(find(statefulSet, "-XX:MaxRAMPercentage=(\\d+)"));
    long maxHeap = maxMemoryOfSerial(limit * percent / 100);

    assertThat(budget.fits(maxHeap)).as("worst case %d MiB, max heap %d MiB", budget.worstCaseBytes() / MIB,
      maxHeap / MIB).isTrue();
  }

  @Test
  @DisplayName("a configuration whose bounds pass the heap is refused, naming the total, the heap, the largest keys and what to do")
  void tooLargeIsRefused() throws IOException {
    JsonObject raw = yaml("conf/gateway.yaml");
    raw.getJsonObject("batching").put("maxPendingKeys", 1_000_000);
    raw.getJsonObject("beacon").put("maxTrackedClients", 200_000);
    MemoryBudget budget = MemoryBudget.of(GatewayConfig.fromJson(raw), INGEST_VERTICLES, EVENT_LOOPS);

    assertThatThrownBy(() -> budget.requireFits(256 * MIB))
      .isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("batching.maxPendingKeys: the bounded holders full at once would take ")
      .hasMessageContaining("more than 75 % of the maximum heap of 256 MiB")
      .hasMessageContaining("batching.maxPendingKeys (× 2 ingest verticles, http.instances) 753 MiB (pending deltas)")
      .hasMessageContaining("beacon.maxTrackedClients 277 MiB (per-client beacon limits)")
      .hasMessageContaining("raise -Xmx")
      .hasMessageContaining("lower those keys")
      .hasMessageNotContaining("\n");
  }

  @Test
  @DisplayName("only the holders a configuration fills are counted: no beacons, no uniques, no read cache")
  void onlyWhatIsUsed() {
    JsonObject raw = new JsonObject().put("namespaces", new JsonObject().put("likes", new JsonObject()));
    MemoryBudget budget = MemoryBudget.of(GatewayConfig.fromJson(raw), 1, 2);

    assertThat(budget.holders()).extracting(MemoryBudget.Holder::name)
      .doesNotContain("per-client beacon limits", "user-agent verdicts", "unique-visitor sketches", "read cache");
  }

  /** Serial's maximum heap leaves one survivor space out: young = a third of -Xmx, a survivor a tenth of young. */
  private static long maxMemoryOfSerial(long xmx) {
    return xmx - xmx / 30;
  }

  private static long jvmOptionsMaxHeap() throws IOException {
    String xmx = Files.readAllLines(Path.of("conf/jvm.options")).stream().filter(line -> line.startsWith("-Xmx"))
      .findFirst().orElseThrow().substring("-Xmx".length());
    assertThat(xmx).endsWith("m");
    return Long.parseLong(xmx.substring(0, xmx.length() - 1)) * MIB;
  }

  private static GatewayConfig load(String file) throws IOException {
    return GatewayConfig.fromJson(yaml(file));
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
