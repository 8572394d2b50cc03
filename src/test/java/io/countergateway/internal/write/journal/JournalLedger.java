package io.countergateway.internal.write.journal;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A workload against the journal alone, with what a database would hold and the one oracle of every crash test: per
 * counter, {@code answered ≤ counted ≤ appended} once a restart has written what the replay handed over.
 *
 * <p>As the coalescer does: increments are appended and answered when {@link Journal#committed()} says so; every few
 * requests the pending deltas form a flush, recorded with {@link Journal#formed} and "committed" (added to the table,
 * its id kept) once recorded, then settled; the lowest position still needed is told to the journal. A flush the
 * journal could not record is never committed. Confined to the loop the journal runs on, but for the reads after a
 * round is awaited.
 */
final class JournalLedger {
  final Map<CounterKey, Long> appended = new HashMap<>();
  final Map<CounterKey, Long> answered = new HashMap<>();
  final Map<CounterKey, Long> table = new HashMap<>();
  final Set<String> committed = new HashSet<>();
  private final String source;
  private long sequence;
  int refused;
  /** The code of the last refusal. */
  String refusal;
  /** While set, a flush is recorded but never committed (an outage: it stays in flight). */
  boolean databaseDown;

  /** One run's coalescer: pending deltas with their first position, flushes in flight with theirs. */
  private final class Run {
    final Journal journal;
    final LinkedHashMap<CounterKey, long[]> pending = new LinkedHashMap<>();
    final List<long[]> flights = new ArrayList<>();

    Run(Journal journal) {
      this.journal = journal;
      journal.neededBy(this::lowestNeeded);
    }

    long lowestNeeded() {
      long lowest = journal.position();
      for (long[] entry : pending.values()) {
        lowest = Math.min(lowest, entry[1]);
      }
      for (long[] flight : flights) {
        lowest = Math.min(lowest, flight[0]);
      }
      return lowest;
    }
  }

  private Run run;

  JournalLedger(String source) {
    this.source = source;
  }

  /** The same ledger, to go on from in another way (a crash case that branches). */
  JournalLedger copy() {
    JournalLedger copy = new JournalLedger(source + "'");
    copy.appended.putAll(appended);
    copy.answered.putAll(answered);
    copy.table.putAll(table);
    copy.committed.addAll(committed);
    return copy;
  }

  /** Starts a run on {@code journal} (on its loop): what the replay handed over is written, as the coalescer would. */
  void start(Journal journal) {
    run = new Run(journal);
    Journal.Recovered recovered = journal.recovered();
    for (Flush flush : recovered.unsettled()) {
      if (committed.add(flush.id().toString())) {
        flush.rows().forEach(row -> table.merge(new CounterKey(row.type(), row.id(), row.bucket()), row.delta(), Long::sum));
      }
      journal.settled(flush.id().toString());
    }
    recovered.pending().forEach((key, delta) -> run.pending.put(key, new long[] {delta, 0}));
  }

  /**
   * {@code requests} increments of 1 over {@code keys} counters (prefix {@code prefix}), a flush formed every
   * {@code flushEvery} of them; returns the answers (on the loop).
   */
  List<Future<Void>> round(String prefix, int requests, int keys, int flushEvery) {
    List<Future<Void>> answers = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      Increment increment = new Increment(new CounterKey("likes", prefix + (i % keys)), 1);
      try {
        run.journal.checkRoom(JournalRecords.estimate(increment));
      } catch (ApiError full) {
        refused++;
        refusal = full.code();
        continue;
      }
      long lsn = run.journal.appendIncrement(increment);
      appended.merge(increment.key(), 1L, Long::sum);
      long[] entry = run.pending.computeIfAbsent(increment.key(), k -> new long[] {0, lsn});
      entry[0]++;
      answers.add(run.journal.committed().onSuccess(v -> answered.merge(increment.key(), 1L, Long::sum)));
      if (i % flushEvery == flushEvery - 1) {
        answers.add(flush());
      }
    }
    return answers;
  }

  /**
   * Requests of {@code perRequest} counters each, every counter new (prefix {@code prefix}), no flush: what a batch
   * endpoint journals, one record per request; returns the answers (on the loop).
   */
  List<Future<Void>> distinctBatches(String prefix, int requests, int perRequest) {
    List<Future<Void>> answers = new ArrayList<>();
    for (int r = 0; r < requests; r++) {
      List<Increment> increments = new ArrayList<>();
      long bytes = 0;
      for (int i = 0; i < perRequest; i++) {
        Increment increment = new Increment(new CounterKey("likes", prefix + r + "-" + i), 1);
        increments.add(increment);
        bytes += JournalRecords.estimate(increment);
      }
      try {
        run.journal.checkRoom(bytes);
      } catch (ApiError full) {
        refused++;
        refusal = full.code();
        continue;
      }
      long lsn = run.journal.appendIncrements(increments);
      for (Increment increment : increments) {
        appended.merge(increment.key(), 1L, Long::sum);
        run.pending.computeIfAbsent(increment.key(), k -> new long[] {0, lsn})[0]++;
      }
      answers.add(run.journal.committed().onSuccess(v -> increments.forEach(increment ->
        answered.merge(increment.key(), 1L, Long::sum))));
    }
    return answers;
  }

  boolean hasPending() {
    return !run.pending.isEmpty();
  }

  /** Rounds of increments (no flush) on {@code loop} until the journal refuses one: a full disk, say. */
  void fillUntilRefused(JournalLoop loop, String prefix) {
    for (int round = 0; round < 50 && refused == 0; round++) {
      JournalLoop.await(Future.join(loop.onLoop(() -> round(prefix, 20, 10, 1_000))).otherwiseEmpty());
    }
  }

  /** Forms a flush of everything pending; completes once it is settled (or could not be recorded). */
  Future<Void> flush() {
    return flush(Long.MAX_VALUE);
  }

  /**
   * As the coalescer does: forms a flush of the oldest pending counters whose rows fit {@code recordBytes}
   * ({@link JournalRecords#rowBytesAtMost} each); completes once it is settled (or could not be recorded).
   */
  Future<Void> flush(long recordBytes) {
    if (run.pending.isEmpty()) {
      return Future.succeededFuture();
    }
    List<FlushRow> rows = new ArrayList<>();
    long first = Long.MAX_VALUE;
    long room = recordBytes;
    var entries = run.pending.entrySet().iterator();
    while (entries.hasNext()) {
      Map.Entry<CounterKey, long[]> entry = entries.next();
      CounterKey key = entry.getKey();
      room -= JournalRecords.rowBytesAtMost(key);
      if (room < 0 && !rows.isEmpty()) {
        break;
      }
      entries.remove();
      rows.add(new FlushRow(key.type(), key.id(), (short) 0, entry.getValue()[0], key.bucket()));
      first = Math.min(first, entry.getValue()[1]);
    }
    rows.sort(null);
    Flush flush = new Flush(FlushId.formed(source, sequence++), rows);
    long[] flight = {first};
    run.flights.add(flight);
    Journal journal = run.journal;
    return journal.formed(flush, List.of()).onSuccess(recorded -> {
      if (databaseDown) {
        return;
      }
      // the database commits it; the journal hears of its settlement
      if (committed.add(flush.id().toString())) {
        rows.forEach(row -> table.merge(new CounterKey(row.type(), row.id(), row.bucket()), row.delta(), Long::sum));
      }
      run.flights.remove(flight);
      journal.settled(flush.id().toString());
    }).otherwiseEmpty().mapEmpty();
  }

  /** After the restart's run wrote what it was handed: what was pending goes to the table too. */
  void drain() {
    run.pending.forEach((key, entry) -> table.merge(key, entry[0], Long::sum));
    run.pending.clear();
  }

  /** The oracle: every answered increment counted, nothing counted that was not appended, per counter. */
  void assertHolds(String what) {
    Set<CounterKey> keys = new HashSet<>(appended.keySet());
    keys.addAll(table.keySet());
    for (CounterKey key : keys) {
      long counted = table.getOrDefault(key, 0L);
      assertThat(counted).as("%s: %s counted (answered %d, appended %d)", what, key.id(),
          answered.getOrDefault(key, 0L), appended.getOrDefault(key, 0L))
        .isBetween(answered.getOrDefault(key, 0L), appended.getOrDefault(key, 0L));
    }
  }

  long answeredTotal() {
    return answered.values().stream().mapToLong(Long::longValue).sum();
  }
}
