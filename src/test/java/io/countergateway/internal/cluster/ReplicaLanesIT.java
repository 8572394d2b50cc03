package io.countergateway.internal.cluster;

import io.countergateway.internal.write.SlotPicker;
import io.countergateway.config.GatewayConfig;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/** Several gateway replicas (each its own Vert.x, as separate processes would be) on one table. */
class ReplicaLanesIT {
  /** Three replicas of two lanes, two slots per lane (batching.maxInFlight 1, plus one for retries). */
  private static final int DOWNLOADS_SLOTS = 12;

  private static JsonObject database(String kind) {
    return kind.equals("postgres") ? TestDatabases.postgres() : TestDatabases.mariadb();
  }

  private static JsonObject replicaConfig(String kind, String table, int leaseMs) {
    return GatewayFixture.baseConfig(database(kind), table).put("lanes", new JsonObject().put("lease", leaseMs + "ms"));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("three replicas of two coalescers lease six distinct lanes, and each replica's flushes write only its own lanes' slots")
  void replicasWriteDisjointLanes(String kind) {
    String table = "lanes_disjoint_" + kind;
    List<GatewayFixture> replicas = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        JsonObject config = replicaConfig(kind, table, 15_000);
        config.getJsonObject("namespaces").getJsonObject("downloads").put("slots", DOWNLOADS_SLOTS);
        replicas.add(GatewayFixture.start(config));
      }
      GatewayFixture any = replicas.get(0);
      Map<String, List<Integer>> leases = leasesByOwner(any);
      assertThat(leases).hasSize(3).allSatisfy((owner, lanes) -> assertThat(lanes).hasSize(2));
      List<Integer> allLanes = leases.values().stream().flatMap(List::stream).sorted().toList();
      assertThat(allLanes).containsExactly(0, 1, 2, 3, 4, 5);
      for (GatewayFixture replica : replicas) {
        assertThat(leases).containsValue(replica.gateway.lanes());
      }
      // in any rounds, no two lanes map to the same slot of the namespace
      Set<Short> slotsOfAllLanes = new HashSet<>();
      for (int lane : allLanes) {
        Set<Short> ownSlots = slotsOfLane(lane);
        assertThat(ownSlots).as("slots of lane %d", lane).hasSize(2).noneMatch(slotsOfAllLanes::contains);
        slotsOfAllLanes.addAll(ownSlots);
      }

      for (int r = 0; r < replicas.size(); r++) {
        GatewayFixture replica = replicas.get(r);
        List<Future<?>> posts = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
          posts.add(replica.http.post("/v1/counters/downloads/replica-" + r + "-" + (i % 10) + "/increments").send());
        }
        await(Future.all(posts));
      }
      for (int r = 0; r < replicas.size(); r++) {
        Set<Short> ownSlots = new HashSet<>();
        replicas.get(r).gateway.lanes().forEach(lane -> ownSlots.addAll(slotsOfLane(lane)));
        assertThat(slotsWritten(any, "replica-" + r + "-")).as("slots written by replica %d", r).isSubsetOf(ownSlots);
        assertThat(await(any.sumsInTable("downloads", "replica-" + r + "-"))).hasSize(10).allSatisfy((id, sum) -> assertThat(sum).isEqualTo(20));
      }
    } finally {
      replicas.forEach(GatewayFixture::close);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a replica that dies keeps its lanes only until its lease expires; the next replica takes them, the live one keeps its own")
  void deadReplicaLanesAreReclaimed(String kind) throws InterruptedException {
    String table = "lanes_reclaim_" + kind;
    GatewayFixture dying = GatewayFixture.start(replicaConfig(kind, table, 1_000));
    GatewayFixture live = GatewayFixture.start(replicaConfig(kind, table, 1_000));
    GatewayFixture next = null;
    try {
      assertThat(dying.gateway.lanes()).containsExactly(0, 1);
      assertThat(live.gateway.lanes()).containsExactly(2, 3);

      await(dying.vertx.close()); // no graceful stop: its leases stay in the table, no longer renewed
      Thread.sleep(2_000);        // two leases: the live replica must have renewed its own meanwhile

      next = GatewayFixture.start(replicaConfig(kind, table, 1_000));
      assertThat(next.gateway.lanes()).containsExactly(0, 1);
      assertThat(live.gateway.lanes()).containsExactly(2, 3);
      Map<String, List<Integer>> leases = leasesByOwner(live);
      assertThat(leases).hasSize(2).containsValues(List.of(0, 1), List.of(2, 3));

      live.close();
      live = null;
      assertThat(leasesByOwner(next)).as("a graceful stop frees the lanes at once").hasSize(1).containsValue(List.of(0, 1));
    } finally {
      if (live != null) {
        live.close();
      }
      if (next != null) {
        next.close();
      }
    }
  }

  @Test
  @DisplayName("a namespace with fewer slots than the lanes in use is named at start, with the slots it needs")
  void fewSlotsAreReported() {
    GatewayConfig config = GatewayConfig.fromJson(GatewayFixture.baseConfig(TestDatabases.postgres(), "unused"));
    assertThat(ReplicaLanes.slotShortfalls(config, 3)).singleElement().asString()
      .contains("namespace likes has 4 slots but 3 lanes are in use").contains("namespaces.likes.slots to at least 6");
    assertThat(ReplicaLanes.slotShortfalls(config, 2)).isEmpty();
  }

  /** Every slot a lane walks through, over enough rounds to come back to its first. */
  private static Set<Short> slotsOfLane(int lane) {
    Set<Short> slots = new HashSet<>();
    for (int round = 0; round < 10; round++) {
      slots.add(SlotPicker.slotOf(lane, 1, round, DOWNLOADS_SLOTS));
    }
    return slots;
  }

  private static Map<String, List<Integer>> leasesByOwner(GatewayFixture fixture) {
    return await(fixture.sql().query("SELECT owner, lane FROM " + fixture.table + "_lanes ORDER BY lane").execute().map(rows -> {
      Map<String, List<Integer>> byOwner = new HashMap<>();
      for (Row row : rows) {
        byOwner.computeIfAbsent(row.getString(0), o -> new ArrayList<>()).add(row.getInteger(1));
      }
      return byOwner;
    }));
  }

  private static Set<Short> slotsWritten(GatewayFixture fixture, String idPrefix) {
    return await(fixture.sql().query("SELECT DISTINCT slot FROM " + fixture.table
      + " WHERE record_id LIKE '" + idPrefix + "%'").execute().map(rows -> {
      Set<Short> slots = new HashSet<>();
      rows.forEach(row -> slots.add(row.getShort(0)));
      return slots;
    }));
  }
}
