package io.countergateway.beacon;

import io.countergateway.config.NamespaceOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Per-client beacon limits")
class ClientLimitsTest {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  private static NamespaceOptions namespace(int perMinute, int burst, int idsPerHour) {
    return NamespaceOptions.fromJson("pages", new JsonObject().put("public", true).put("beacon", new JsonObject()
      .put("perClientPerMinute", perMinute).put("perClientBurst", burst).put("idsPerClientPerHour", idsPerHour)));
  }

  @Test
  @DisplayName("a client gets its burst at once, then the per-minute rate; another client is not affected")
  void tokenBucketPerClient() {
    ClientLimits limits = new ClientLimits(1_000, nanos::get);
    NamespaceOptions pages = namespace(60, 10, 0);
    int counted = 0;
    for (int i = 0; i < 100; i++) {
      if (limits.check(pages, "198.51.100.7", "home") == null) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(10);
    assertThat(limits.check(pages, "198.51.100.8", "home")).isNull();
    nanos.addAndGet(5_000_000_000L); // 5 s at one a second
    counted = 0;
    for (int i = 0; i < 100; i++) {
      if (limits.check(pages, "198.51.100.7", "home") == null) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(5);
    assertThat(limits.check(pages, "198.51.100.7", "home")).isEqualTo(DropReason.RATE_LIMITED);
  }

  @Test
  @DisplayName("a client's distinct ids per hour are capped, ids it counted already still pass, and the hour resets it")
  void distinctIdsPerHour() {
    ClientLimits limits = new ClientLimits(1_000, nanos::get);
    NamespaceOptions pages = namespace(0, 1, 300);
    int counted = 0;
    for (int i = 0; i < 5_000; i++) {
      if (limits.check(pages, "198.51.100.7", "random-" + i) == null) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(300);
    assertThat(limits.check(pages, "198.51.100.7", "random-0")).as("an id it counted").isNull();
    long refused = java.util.stream.IntStream.range(0, 100)
      .filter(i -> limits.check(pages, "198.51.100.7", "fresh-" + i) == DropReason.TOO_MANY_IDS).count();
    assertThat(refused).as("new ids past the cap").isEqualTo(100);
    nanos.addAndGet(3_600_000_000_000L);
    assertThat(java.util.stream.IntStream.range(0, 100)
      .filter(i -> limits.check(pages, "198.51.100.7", "fresh-" + i) == null).count()).as("a new hour").isEqualTo(100);
  }

  @Test
  @DisplayName("the client records are an LRU of beacon.maxTrackedClients: a crowd of addresses cannot grow memory")
  void boundedMemory() {
    ClientLimits limits = new ClientLimits(1_000, nanos::get);
    NamespaceOptions pages = namespace(600, 120, 300);
    for (int i = 0; i < 50_000; i++) {
      limits.check(pages, "10.0." + (i >> 8 & 255) + "." + (i & 255) + "/" + i, "home");
    }
    assertThat(limits.tracked()).isLessThanOrEqualTo(1_000);
  }
}
