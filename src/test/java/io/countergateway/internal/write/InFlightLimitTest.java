package io.countergateway.internal.write;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flushes-in-flight rule against a scripted database on virtual time: a coalescer that sends a flush whenever the
 * limit lets it, carrying what arrived since the last one, to a database a round trip away that serves one flush at a
 * time (a fixed cost plus a cost per row), optionally on a machine whose speed changes every quarter of a second (other
 * work on its cores) by a seeded draw. No clock but the simulation's.
 */
@DisplayName("The number of flushes in flight, on virtual time")
class InFlightLimitTest {
  private static final int CEILING = 8;

  /** One simulated run; the limits it had after each committed write, the first half (settling) left out. */
  private static final class Run {
    private long now;
    private final List<Integer> settled = new ArrayList<>();
    private int highest;
    final InFlightLimit limit;
    /** The database's time per flush is multiplied by 1 + {@code swing} × a draw in [0, 1), one per quarter second. */
    private double swing;
    private final Random random = new Random(7);
    private long quarter = -1;
    private double slowdown = 1;

    Run(boolean adaptive) {
      this(CEILING, adaptive);
    }

    Run(int ceiling, boolean adaptive) {
      limit = new InFlightLimit(ceiling, adaptive, () -> now);
    }

    Run swinging(double by) {
      swing = by;
      return this;
    }

    private double slowdown() {
      if (now / 250_000_000L != quarter) {
        quarter = now / 250_000_000L;
        slowdown = 1 + swing * random.nextDouble();
      }
      return slowdown;
    }

    /** {@code roundTripUs}: the distance; {@code serviceUs} + {@code perRowUs} × rows: the database's time per flush. */
    Run drive(long roundTripUs, long serviceUs, double perRowUs, double rowsPerUs, int writes) {
      record InFlight(long doneAt, long sentAt, long gap, long rows) {
      }
      PriorityQueue<InFlight> inFlight = new PriorityQueue<>((a, b) -> Long.compare(a.doneAt, b.doneAt));
      long serverFreeAt = now;
      long lastFormed = now;
      for (int written = 0; written < writes; written++) {
        while (inFlight.size() < limit.current()) {
          double rows = Math.max(1, rowsPerUs * (now - lastFormed) / 1000);
          lastFormed = now;
          long arrives = now + roundTripUs * 1000 / 2;
          long start = Math.max(arrives, serverFreeAt);
          serverFreeAt = start + (long) (slowdown() * (serviceUs * 1000 + perRowUs * rows * 1000));
          inFlight.add(new InFlight(serverFreeAt + roundTripUs * 1000 / 2, now, limit.sent(), (long) rows));
        }
        InFlight done = inFlight.poll();
        now = done.doneAt;
        limit.succeeded(now - done.sentAt, done.gap, done.rows);
        highest = Math.max(highest, limit.current());
        if (written >= writes / 2) {
          settled.add(limit.current());
        }
      }
      return this;
    }
  }

  @Test
  @DisplayName("with the database on loopback, where a second flush only queues behind the first, it comes down from the ceiling to 1 (2 while trying)")
  void loopbackSettlesLow() {
    Run run = new Run(true).drive(0, 200, 2, 0.05, 20_000);

    assertThat(run.settled).allSatisfy(limit -> assertThat(limit).isBetween(1, 2));
  }

  @Test
  @DisplayName("with the database 2 ms away and a short service time, it keeps the connection busy at the ceiling (half of it while trying), never above it")
  void distantDatabaseGrows() {
    Run run = new Run(true).drive(2_000, 200, 2, 0.05, 20_000);

    assertThat(run.settled).allSatisfy(limit -> assertThat(limit).isGreaterThanOrEqualTo(CEILING / 2));
    assertThat(average(run.settled)).isGreaterThan(7);
    assertThat(run.highest).isEqualTo(CEILING);
  }

  @Test
  @DisplayName("on a machine whose speed changes every quarter second, a database 0.5 ms away does not get 1 flush in flight where more pay")
  void swingsAreNotReadAsDistance() {
    Run run = new Run(4, true).swinging(3).drive(500, 200, 2, 0.05, 20_000);

    assertThat(run.settled.stream().filter(limit -> limit == 1).count()).isLessThan(run.settled.size() / 20);
    assertThat(average(run.settled)).isGreaterThan(2.5);
  }

  @Test
  @DisplayName("at 0.5 ms it keeps more than on loopback, never above the ceiling")
  void halfAMillisecond() {
    Run near = new Run(true).drive(0, 200, 2, 0.05, 20_000);
    Run away = new Run(true).drive(500, 200, 2, 0.05, 20_000);

    assertThat(average(away.settled)).isGreaterThan(average(near.settled));
    assertThat(away.highest).isLessThanOrEqualTo(CEILING);
  }

  @Test
  @DisplayName("a database busy 1.5 ms of a 3.5 ms round trip gets the flushes that keep it busy (2.3) and about one more, not the ceiling")
  void saturatedDatabaseStaysLow() {
    Run run = new Run(true).drive(2_000, 1_500, 2, 0.05, 20_000);

    assertThat(average(run.settled)).isLessThan(4.5);
  }

  @Test
  @DisplayName("a database that moves from 2 ms away to loopback gets fewer flushes in flight again")
  void followsADatabaseThatMoved() {
    Run run = new Run(true).drive(2_000, 200, 2, 0.05, 10_000);
    assertThat(run.limit.current()).isGreaterThan(4);

    run.settled.clear();
    run.drive(0, 200, 2, 0.05, 40_000);

    assertThat(average(run.settled)).isLessThan(1.5);
  }

  @Test
  @DisplayName("a pause in the traffic is not read as what the limit bought")
  void pauseSaysNothing() {
    Run run = new Run(true).drive(0, 200, 2, 0.05, 20_000);
    int settled = run.limit.current();

    run.now += 60_000_000_000L;
    run.drive(0, 200, 2, 0.05, 50);

    assertThat(run.limit.current()).isEqualTo(settled);
  }

  @Test
  @DisplayName("a failing database shrinks it to one flush in flight, and it grows again once writes commit")
  void failuresShrink() {
    Run run = new Run(true).drive(2_000, 200, 2, 0.05, 5_000);
    assertThat(run.limit.current()).isGreaterThan(4);

    run.limit.failed();
    run.limit.failed();
    run.limit.failed();
    assertThat(run.limit.current()).isEqualTo(1);

    run.drive(2_000, 200, 2, 0.05, 5_000);
    assertThat(run.limit.current()).isGreaterThan(4);
  }

  @Test
  @DisplayName("fixed (adaptiveInFlight false), it keeps the ceiling whatever the round trip")
  void fixedKeepsTheCeiling() {
    Run run = new Run(false).drive(0, 200, 2, 0.05, 2_000);
    run.limit.failed();

    assertThat(run.settled).containsOnly(CEILING);
    assertThat(run.limit.current()).isEqualTo(CEILING);
  }

  private static double average(List<Integer> limits) {
    return limits.stream().mapToInt(Integer::intValue).average().orElseThrow();
  }
}
