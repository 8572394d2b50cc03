package io.countergateway.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.model.ApiError;
import io.countergateway.model.CounterKey;
import io.countergateway.model.Increment;
import io.countergateway.store.Flush;
import io.countergateway.store.FlushRow;
import io.countergateway.testing.EventLoop;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The journal's files on a temporary directory: group commit, replay, torn and corrupt tails, deletion, the bound. */
@DisplayName("The write-ahead journal")
class JournalTest {
  private static final long SEGMENT = 64 * 1024;

  @TempDir
  Path dir;
  private Vertx vertx;
  private Context loop;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private JournalOptions options(JournalOptions.Fsync fsync, long maxBytes) {
    return JournalOptions.of(dir.toString(), fsync, SEGMENT, maxBytes);
  }

  private Journal open(JournalOptions options) {
    return await(EventLoop.call(loop, () -> Journal.open(vertx, options, 0, 1, full -> { })));
  }

  private Journal open() {
    return open(options(JournalOptions.Fsync.ALWAYS, 1 << 30));
  }

  private <T> T onLoop(java.util.concurrent.Callable<T> work) {
    return EventLoop.call(loop, work);
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static Increment like(String id, long delta) {
    return new Increment(new CounterKey("likes", id), delta);
  }

  /** Appends {@code n} increments of 1 to ids {@code prefix0…}, each as its own request; waits for all answers. */
  private void accept(Journal journal, String prefix, int n) {
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

  private List<Path> segments() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(file -> file.getFileName().toString().endsWith(".seg")).sorted().toList();
    }
  }

  @Test
  @DisplayName("one fsync answers many appends (group commit), and a reopened journal holds every answered increment")
  void groupCommitAndReplay() {
    Journal journal = open();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    onLoop(() -> {
      journal.neededBy(() -> 0); // as a coalescer holding everything: the once-a-second deletion keeps every segment
      journal.registerMetrics(registry, Tags.empty());
      return null;
    });
    accept(journal, "a", 5_000);
    Timer fsyncs = registry.get("gateway.journal.fsync.duration").timer();
    assertThat(fsyncs.count()).as("fsyncs for 5,000 appends").isPositive().isLessThan(5_000);
    await(onLoop(() -> journal.close(false)));

    Journal reopened = open();
    Journal.Recovered recovered = reopened.recovered();
    assertThat(recovered.pending()).hasSize(5_000).containsEntry(new CounterKey("likes", "a42"), 1L);
    assertThat(recovered.unsettled()).isEmpty();
    await(onLoop(() -> reopened.close(false)));
    // the replay's snapshot is itself replayed: the same state again, not twice
    Journal again = open();
    assertThat(again.recovered().pending()).hasSize(5_000).containsEntry(new CounterKey("likes", "a42"), 1L);
  }

  @Test
  @DisplayName("a flush formed and settled takes its increments out of the replay; formed but not settled, it is resolved by its id")
  void flushesFormedAndSettled() {
    Journal journal = open();
    Flush first = new Flush("src:1", List.of(new FlushRow("likes", "x", (short) 0, 3)));
    Flush second = new Flush("src:2", List.of(new FlushRow("likes", "y", (short) 1, 5)));
    onLoop(() -> {
      journal.appendIncrement(like("x", 3));
      journal.appendIncrement(like("y", 5));
      journal.appendIncrement(like("z", 7));
      journal.formed(first, List.of());
      journal.formed(second, List.of());
      journal.settled(first.id());
      return null;
    });
    await(onLoop(() -> journal.close(false)));

    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).containsExactly(Map.entry(new CounterKey("likes", "z"), 7L));
    assertThat(recovered.unsettled()).containsExactly(second);
  }

  @Test
  @DisplayName("a split flush is resolved by its halves, and settling the flush as formed settles them")
  void splitFlushes() {
    Journal journal = open();
    FlushRow a = new FlushRow("likes", "a", (short) 0, 1);
    FlushRow b = new FlushRow("likes", "b", (short) 0, 2);
    Flush parent = new Flush("src:7", List.of(a, b));
    Flush left = parent.half(0, List.of(a));
    Flush right = parent.half(1, List.of(b));
    Flush other = new Flush("src:8", List.of(new FlushRow("likes", "c", (short) 0, 3)));
    onLoop(() -> {
      journal.appendIncrement(like("a", 1));
      journal.appendIncrement(like("b", 2));
      journal.appendIncrement(like("c", 3));
      journal.formed(parent, List.of());
      journal.formed(other, List.of());
      journal.replaced(parent, List.of(left, right));
      return null;
    });
    await(onLoop(() -> journal.close(false)));
    Journal reopened = open();
    assertThat(reopened.recovered().pending()).isEmpty();
    assertThat(reopened.recovered().unsettled()).containsExactly(other, left, right);

    onLoop(() -> {
      reopened.settled(parent.id());
      return null;
    });
    await(onLoop(() -> reopened.close(false)));
    assertThat(open().recovered().unsettled()).containsExactly(other, left, right);
  }

  @Test
  @DisplayName("a torn tail is cut at the last good frame: what came before is replayed, the rest counted as lost, no failure")
  void tornTail() throws IOException {
    Journal journal = open();
    accept(journal, "t", 100);
    onLoop(() -> {
      journal.appendIncrement(like("late", 1));
      return journal.committed();
    });
    await(onLoop(() -> journal.close(false)));
    Path file = segments().get(segments().size() - 1);
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(raf.length() - 3); // the last frame cut short, as a crash during its write leaves it
    }
    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).hasSize(100).doesNotContainKey(new CounterKey("likes", "late"));
  }

  @Test
  @DisplayName("a corrupt frame ends its file: the frames before it are replayed, none after it")
  void corruptFrame() throws IOException {
    Journal journal = open();
    accept(journal, "before", 10);
    await(onLoop(() -> {
      journal.appendIncrement(like("bad", 1));
      return journal.committed();
    }));
    long badFrameAt = onLoop(journal::fileOffset);
    accept(journal, "after", 10);
    await(onLoop(() -> journal.close(false)));
    try (RandomAccessFile raf = new RandomAccessFile(segments().get(0).toFile(), "rw")) {
      raf.seek(badFrameAt - 2);
      raf.write(raf.read() ^ 0x55); // a flipped byte in the payload of the "bad" frame
    }
    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).hasSize(10).containsKey(new CounterKey("likes", "before3"))
      .doesNotContainKeys(new CounterKey("likes", "bad"), new CounterKey("likes", "after3"));
  }

  @Test
  @DisplayName("a replay snapshot that never ended is ignored: the journal it was made from is replayed again")
  void unfinishedSnapshot() throws IOException {
    Journal journal = open();
    accept(journal, "s", 3);
    await(onLoop(() -> journal.close(false)));
    List<Path> before = segments();
    // a later segment holding only the beginning of a snapshot, as a crash during a replay leaves it
    JournalRecords.Out out = new JournalRecords.Out(64);
    JournalRecords.snapshotBegin(out);
    JournalRecords.increment(out, like("phantom", 100));
    byte[] payload = out.copy();
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(payload);
    java.nio.ByteBuffer file = java.nio.ByteBuffer.allocate(16 + payload.length).put(JournalReader.MAGIC).putInt(1)
      .putInt(payload.length).putInt((int) crc.getValue()).put(payload);
    Files.write(dir.resolve(Journal.fileName(0, 999)), file.array());
    assertThat(before).isNotEmpty();
    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).hasSize(3).doesNotContainKey(new CounterKey("likes", "phantom"));
  }

  @Test
  @DisplayName("segments wholly below what the coalescer still needs are deleted; the ones it needs are kept")
  void deletion() throws IOException {
    Journal journal = open();
    long[] needed = {0};
    onLoop(() -> {
      journal.neededBy(() -> needed[0]);
      return null;
    });
    for (int round = 0; round < 20; round++) {
      accept(journal, "d" + round + "-", 1_500);
    }
    assertThat(segments()).as("segments of %d KiB", SEGMENT / 1024).hasSizeGreaterThan(3);
    onLoop(() -> {
      journal.release();
      return null;
    });
    int kept = segments().size();
    assertThat(kept).as("segments kept while everything is needed").isGreaterThan(3);
    onLoop(() -> {
      needed[0] = journal.position();
      journal.release();
      return null;
    });
    await(onLoop(() -> journal.close(false)));
    assertThat(segments()).as("segments left once nothing is needed").hasSize(1);
  }

  @Test
  @DisplayName("past journal.maxBytes, new increments are refused with 503 journal_full before anything is taken")
  void byteBound() {
    Journal journal = open(options(JournalOptions.Fsync.ALWAYS, 2 * SEGMENT));
    long[] needed = {0};
    onLoop(() -> {
      journal.neededBy(() -> needed[0]);
      return null;
    });
    Throwable refused = onLoop(() -> {
      try {
        for (int i = 0; i < 100_000; i++) {
          Increment increment = like("full" + i, 1);
          journal.checkRoom(JournalRecords.estimate(increment));
          journal.appendIncrement(increment);
        }
        return null;
      } catch (ApiError e) {
        return e;
      }
    });
    assertThat(refused).isInstanceOf(ApiError.class);
    assertThat(((ApiError) refused).status()).isEqualTo(503);
    assertThat(((ApiError) refused).code()).isEqualTo("journal_full");
    await(onLoop(journal::committed));
    // once the coalescer needs nothing, the bytes are released and increments are taken again
    onLoop(() -> {
      needed[0] = journal.position();
      journal.release();
      journal.checkRoom(100);
      return null;
    });
  }

  @Test
  @DisplayName("a second gateway on the same journal directory is refused at start")
  void oneGatewayPerDirectory() {
    open();
    assertThatThrownBy(this::open).hasMessageContaining("in use by another gateway");
  }

  @Test
  @DisplayName("with fsync everyMs and off, answers come after the write; a clean close with nothing held leaves no segment")
  void otherPolicies() throws IOException {
    for (JournalOptions.Fsync policy : List.of(JournalOptions.Fsync.EVERY_MS, JournalOptions.Fsync.OFF)) {
      Journal journal = open(options(policy, 1 << 30));
      accept(journal, policy + "-", 1_000);
      await(onLoop(() -> journal.close(false)));
      Journal reopened = open(options(policy, 1 << 30));
      assertThat(reopened.recovered().pending()).as(policy.toString()).hasSize(1_000);
      await(onLoop(() -> reopened.close(true)));
      assertThat(segments()).as("segments after a close with nothing held").isEmpty();
    }
  }

  @Test
  @DisplayName("after a failed force nothing more is answered or recorded, no flush is let through, and every segment stays for the replay")
  void failedForce() throws IOException {
    Journal journal = open();
    long[] needed = {0};
    onLoop(() -> {
      journal.neededBy(() -> needed[0]);
      return null;
    });
    accept(journal, "kept", 50);
    Flush flush = new Flush("src:9", List.of(new FlushRow("likes", "kept0", (short) 0, 1)));
    onLoop(() -> {
      journal.fail(new java.io.UncheckedIOException(new IOException("EIO, as a failing disk answers")));
      return null;
    });
    assertThatThrownBy(() -> await(onLoop(() -> journal.formed(flush, List.of()))))
      .as("a flush the journal cannot record is not attempted").hasRootCauseMessage("the journal cannot record the flush src:9");
    Throwable refused = onLoop(() -> {
      try {
        journal.checkRoom(100);
        return null;
      } catch (ApiError e) {
        return e;
      }
    });
    assertThat(((ApiError) refused).code()).isEqualTo("journal_unavailable");
    onLoop(() -> {
      needed[0] = journal.position();
      journal.release();
      return null;
    });
    await(onLoop(() -> journal.close(true)));
    assertThat(segments()).as("segments after a failure and a close with nothing held").isNotEmpty();
    assertThat(open().recovered().pending()).hasSize(50);
  }
}
