package io.countergateway.internal.write.journal;

import io.countergateway.testing.TestBounds;
import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.Eventually;
import io.countergateway.testing.VirtualTimers;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** One Vert.x and one event loop on which tests open, feed and reopen journals. */
final class JournalLoop implements AutoCloseable {
  static final String TABLE = "slotted_counters";

  final Vertx vertx = Vertx.vertx();
  final Context loop = vertx.getOrCreateContext();
  /**
   * The journals' timers: the release (and directory check) every second, the group fsync of {@code everyMs}, the
   * retry of a segment that could not be made. They run when a test moves time, never on their own.
   */
  final VirtualTimers timers = new VirtualTimers();
  /** Every value {@code fullChanged} was told, in order. */
  final List<Boolean> fullChanges = Collections.synchronizedList(new ArrayList<>());

  static JournalOptions options(Path dir, JournalOptions.Fsync fsync, long segmentBytes, long maxBytes) {
    return JournalOptions.of(dir.toString(), fsync, segmentBytes, maxBytes);
  }

  Journal open(JournalFiles files, JournalOptions options) {
    return open(files, options, TABLE);
  }

  Journal open(JournalFiles files, JournalOptions options, String table) {
    return open(files, options, JournalTarget.tableOnly(table), 0, 1, fullChanges::add);
  }

  /** Opens the journal of verticle {@code index} of {@code instances} for {@code target}, on this loop's timers. */
  Journal open(JournalFiles files, JournalOptions options, JournalTarget target, int index, int instances,
               Consumer<Boolean> fullChanged) {
    return await(onLoop(() -> Journal.open(vertx, timers, options, files, target, index, instances, fullChanged)));
  }

  /**
   * Opens a journal on {@code files} and waits until its first spare is made (the replay makes the snapshot segment
   * and the two reserves: four files made, four directory syncs).
   */
  Journal openWithSpare(FaultingFiles files, JournalOptions options) {
    Journal journal = open(files, options);
    Eventually.until("the first spare", () -> files.count(FaultingFiles.Op.CREATE) >= 4
      && files.count(FaultingFiles.Op.SYNC_DIRECTORY) >= 4);
    return journal;
  }

  /** What {@link Journal#checkRoom} says to {@code bytes} more, on the loop: null when they may be taken. */
  ApiError refusal(Journal journal, long bytes) {
    return onLoop(() -> {
      try {
        journal.checkRoom(bytes);
        return null;
      } catch (ApiError e) {
        return e;
      }
    });
  }

  /** The cause {@code future} failed with, or null when it succeeded. */
  static Throwable failure(Future<?> future) {
    try {
      await(future);
      return null;
    } catch (IllegalStateException e) {
      return e.getCause().getCause();
    }
  }

  <T> T onLoop(Callable<T> work) {
    return EventLoop.call(loop, work);
  }

  static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(TestBounds.millis(20), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static Increment like(String id, long delta) {
    return new Increment(new CounterKey("likes", id), delta);
  }

  static CounterKey key(String id) {
    return new CounterKey("likes", id);
  }

  /** Appends {@code n} increments of 1 to ids {@code prefix0…}, each as its own request; waits for all answers. */
  void accept(Journal journal, String prefix, int n) {
    List<Future<Void>> answers = onLoop(() -> {
      List<Future<Void>> all = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        journal.appendIncrement(like(prefix + i, 1));
        all.add(journal.committed());
      }
      return all;
    });
    await(Future.all(answers));
  }

  void close(Journal journal, boolean nothingHeld) {
    await(onLoop(() -> journal.close(nothingHeld)));
  }

  @Override
  public void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(TestBounds.millis(10), TimeUnit.MILLISECONDS);
  }
}
