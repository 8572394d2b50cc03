package io.countergateway.internal.write.journal;

import io.countergateway.config.ConfigException;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.testing.Eventually;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import static io.countergateway.internal.write.journal.JournalLoop.await;
import static io.countergateway.internal.write.journal.JournalLoop.key;
import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The journal's files on a temporary directory: group commit, replay, damage, deletion, the bounds, the refusals. */
@DisplayName("The write-ahead journal")
class JournalTest {
  private static final long SEGMENT = 64 * 1024;

  @TempDir
  Path dir;
  private final JournalLoop loop = new JournalLoop();

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  private JournalOptions options(JournalOptions.Fsync fsync, long maxBytes) {
    return JournalLoop.options(dir, fsync, SEGMENT, maxBytes);
  }

  private Journal open(JournalOptions options) {
    return loop.open(JournalFiles.disk(), options);
  }

  private Journal open() {
    return open(options(JournalOptions.Fsync.ALWAYS, 1 << 30));
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
    loop.onLoop(() -> {
      journal.neededBy(() -> 0); // as a coalescer holding everything: the once-a-second deletion keeps every segment
      journal.registerMetrics(registry, Tags.empty());
      return null;
    });
    loop.accept(journal, "a", 5_000);
    Timer fsyncs = registry.get("gateway.journal.fsync.duration").timer();
    assertThat(fsyncs.count()).as("fsyncs for 5,000 appends").isPositive().isLessThan(5_000);
    assertThat(registry.get("gateway.journal.appended").functionCounter().count()).as("bytes appended").isPositive();
    loop.close(journal, false);

    Journal reopened = open();
    Journal.Recovered recovered = reopened.recovered();
    assertThat(recovered.pending()).hasSize(5_000).containsEntry(key("a42"), 1L);
    assertThat(recovered.unsettled()).isEmpty();
    assertThat(recovered.replay().frames()).as("frames read").isGreaterThan(5_000);
    assertThat(recovered.replay().damaged().any()).isFalse();
    assertThat(recovered.replay().tail().any()).isFalse();
    loop.close(reopened, false);
    // the replay's snapshot is itself replayed: the same state again, not twice
    Journal again = open();
    assertThat(again.recovered().pending()).hasSize(5_000).containsEntry(key("a42"), 1L);
  }

  @Test
  @DisplayName("a flush formed and settled takes its increments out of the replay; formed but not settled, it is resolved by its id")
  void flushesFormedAndSettled() {
    Journal journal = open();
    Flush first = new Flush(FlushId.parse("src:1"), List.of(new FlushRow("likes", "x", (short) 0, 3)));
    Flush second = new Flush(FlushId.parse("src:2"), List.of(new FlushRow("likes", "y", (short) 1, 5)));
    loop.onLoop(() -> {
      journal.appendIncrement(like("x", 3));
      journal.appendIncrement(like("y", 5));
      journal.appendIncrement(like("z", 7));
      journal.formed(first, List.of());
      journal.formed(second, List.of());
      journal.settled(first.id().toString());
      journal.settled("never-journaled:1"); // a flush of commit requests only: nothing to record
      journal.settled(first.id().toString()); // settled already: nothing more to record
      return null;
    });
    loop.close(journal, false);

    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).containsExactly(Map.entry(key("z"), 7L));
    assertThat(recovered.unsettled()).containsExactly(second);
    assertThat(recovered.replay().frames()).as("the snapshot, three increments, two flushes and their copies, one "
      + "settlement").isEqualTo(9);
  }

  @Test
  @DisplayName("journaled counters taken with nothing to write (their delta cancelled by commit requests) are not replayed")
  void takenAtZero() {
    Journal journal = open();
    loop.onLoop(() -> {
      journal.appendIncrement(like("zero", 3)); // and a commit request of -3 on it, never journaled
      journal.appendIncrement(like("kept", 1));
      journal.taken(List.of(key("zero")));
      return null;
    });
    loop.close(journal, false);
    assertThat(open().recovered().pending()).containsExactly(Map.entry(key("kept"), 1L));
  }

  @Test
  @DisplayName("a flush id longer than a frame header holds is refused; one of 255 bytes is recorded")
  void longFlushIds() {
    Journal journal = open();
    Flush longest = new Flush(new FlushId("s", 1, "1".repeat(251)), List.of(new FlushRow("likes", "a", (short) 0, 1)));
    await(loop.onLoop(() -> journal.formed(longest, List.of())));
    Flush tooLong = new Flush(new FlushId("s", 1, "1".repeat(252)), List.of(new FlushRow("likes", "a", (short) 0, 1)));
    assertThatThrownBy(() -> loop.onLoop(() -> journal.formed(tooLong, List.of())))
      .hasMessageContaining("longer than 255 bytes");
    loop.close(journal, false);
    assertThat(open().recovered().unsettled()).containsExactly(longest);
  }

  @Test
  @DisplayName("a split flush is resolved by its halves, and settling the flush as formed settles them")
  void splitFlushes() {
    Journal journal = open();
    FlushRow a = new FlushRow("likes", "a", (short) 0, 1);
    FlushRow b = new FlushRow("likes", "b", (short) 0, 2);
    Flush parent = new Flush(FlushId.parse("src:7"), List.of(a, b));
    Flush left = parent.half(0, List.of(a));
    Flush right = parent.half(1, List.of(b));
    Flush other = new Flush(FlushId.parse("src:8"), List.of(new FlushRow("likes", "c", (short) 0, 3)));
    Flush commitOnly = new Flush(FlushId.parse("src:9"), List.of(new FlushRow("likes", "d", (short) 0, 4)));
    loop.onLoop(() -> {
      journal.appendIncrement(like("a", 1));
      journal.appendIncrement(like("b", 2));
      journal.appendIncrement(like("c", 3));
      journal.formed(parent, List.of());
      journal.formed(other, List.of());
      journal.replaced(parent, List.of(left, right));
      return null;
    });
    assertThat(await(loop.onLoop(() -> journal.replaced(commitOnly, List.of(commitOnly.half(0, commitOnly.rows()))))))
      .as("a split of a flush never journaled: nothing to record").isNull();
    loop.close(journal, false);
    Journal reopened = open();
    assertThat(reopened.recovered().pending()).isEmpty();
    assertThat(reopened.recovered().unsettled()).containsExactly(other, left, right);

    // after a restart each half is settled under its own id, as the coalescer writes them; the parent is no flush
    // of this run any more
    loop.onLoop(() -> {
      reopened.settled(parent.id().toString());
      return null;
    });
    loop.close(reopened, false);
    Journal third = open();
    assertThat(third.recovered().unsettled()).containsExactly(other, left, right);
    loop.onLoop(() -> {
      third.settled(left.id().toString());
      third.settled(right.id().toString());
      return null;
    });
    loop.close(third, false);
    Journal fourth = open();
    assertThat(fourth.recovered().unsettled()).containsExactly(other);
    // settling a parent forgets its halves: settling a half after it records nothing more
    Flush again = new Flush(FlushId.parse("src:20"), List.of(a));
    Flush half = again.half(0, List.of(a));
    loop.onLoop(() -> {
      fourth.formed(again, List.of());
      fourth.replaced(again, List.of(half));
      fourth.settled(again.id().toString());
      fourth.settled(half.id().toString());
      return null;
    });
    loop.close(fourth, false);
    Journal.Recovered last = open().recovered();
    assertThat(last.unsettled()).containsExactly(other);
    assertThat(last.replay().frames()).as("the snapshot, the flush, its split (each with its copy), one settlement")
      .isEqualTo(6);
  }

  @Test
  @DisplayName("a torn tail is cut at the last good frame: what came before is replayed, the rest reported as a tail, no failure")
  void tornTail() throws IOException {
    Journal journal = open();
    loop.accept(journal, "t", 100);
    await(loop.onLoop(() -> {
      journal.appendIncrement(like("late", 1));
      return journal.committed();
    }));
    loop.close(journal, false);
    Path file = segments().get(segments().size() - 1);
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
      raf.setLength(raf.length() - 3); // the last frame cut short, as a crash during its write leaves it
    }
    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).hasSize(100).doesNotContainKey(key("late"));
    assertThat(recovered.replay().tail()).as("the tail").satisfies(tail -> {
      assertThat(tail.frames()).isEqualTo(1);
      assertThat(tail.mayHoldAcknowledged()).as("answered, under fsync always").isFalse();
    });
    assertThat(recovered.replay().damaged().any()).isFalse();
  }

  @Test
  @DisplayName("a corrupt frame in the middle costs that frame only: the frames after it are replayed, and the loss is reported as possibly answered")
  void corruptFrame() throws IOException {
    Journal journal = open();
    loop.accept(journal, "before", 10);
    await(loop.onLoop(() -> {
      journal.appendIncrement(like("bad", 1));
      return journal.committed();
    }));
    long badFrameEnd = loop.onLoop(journal::fileOffset);
    loop.accept(journal, "after", 10);
    loop.close(journal, false);
    try (RandomAccessFile raf = new RandomAccessFile(segments().get(0).toFile(), "rw")) {
      raf.seek(badFrameEnd - 2);
      raf.write(raf.read() ^ 0x55); // a flipped byte in the payload of the "bad" frame
    }
    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).hasSize(20).containsKeys(key("before3"), key("after3"), key("after9"))
      .doesNotContainKey(key("bad"));
    assertThat(recovered.replay().damaged()).satisfies(damaged -> {
      assertThat(damaged.frames()).isEqualTo(1);
      assertThat(damaged.increments()).isLessThanOrEqualTo(1);
      assertThat(damaged.mayHoldAcknowledged()).isTrue();
    });
    assertThat(recovered.replay().dropped().counters()).as("nothing set aside: no flush record was lost").isZero();
  }

  @Test
  @DisplayName("a journal of the first format (CGJ1) is still replayed; a snapshot in it that never ended is ignored")
  void firstFormat() throws IOException {
    JournalRecords.Out held = new JournalRecords.Out(64);
    JournalRecords.increments(held, List.of(like("old1", 2), like("old2", 3)));
    JournalRecords.Out unfinished = new JournalRecords.Out(64);
    JournalRecords.snapshotBegin(unfinished);
    JournalRecords.increment(unfinished, like("phantom", 100));
    Files.write(dir.resolve(SegmentFiles.fileName(0, 7)), v1File(held.copy()));
    Files.write(dir.resolve(SegmentFiles.fileName(0, 8)), v1File(unfinished.copy()));
    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).containsOnly(Map.entry(key("old1"), 2L), Map.entry(key("old2"), 3L));
    assertThat(segments()).as("the old files, once carried into the new format")
      .doesNotContain(dir.resolve(SegmentFiles.fileName(0, 7)), dir.resolve(SegmentFiles.fileName(0, 8)));
  }

  @Test
  @DisplayName("a segment file cut inside its header, or whose header is garbage, is reported as a lost tail that may have held answered increments; an empty file as nothing")
  void filesWithoutAGoodHeader() throws IOException {
    for (int length : new int[] {0, 40, Frames.FILE_HEADER_BYTES}) {
      Path in = Files.createDirectories(dir.resolve("garbage-" + length));
      byte[] bytes = new byte[length];
      java.util.Arrays.fill(bytes, (byte) 0x5A);
      Files.write(in.resolve(SegmentFiles.fileName(0, 5)), bytes);
      Journal journal = loop.open(JournalFiles.disk(), JournalLoop.options(in, JournalOptions.Fsync.ALWAYS, SEGMENT,
        1 << 30));
      Journal.Recovered recovered = journal.recovered();
      assertThat(recovered.replay().tail().bytes()).as("%d bytes of garbage", length).isEqualTo(length);
      assertThat(recovered.replay().tail().any()).as("%d bytes of garbage", length).isEqualTo(length > 0);
      assertThat(recovered.replay().mayHaveLost()).as("an unreadable header may have hidden answered increments")
        .isEqualTo(length > 0);
      assertThat(recovered.pending()).isEmpty();
      loop.close(journal, false);
    }
  }

  private static byte[] v1File(byte[] payload) {
    CRC32C crc = new CRC32C();
    crc.update(payload);
    return ByteBuffer.allocate(16 + payload.length + 64).put(Frames.V1_FILE_MAGIC).putInt(1)
      .putInt(payload.length).putInt((int) crc.getValue()).put(payload).array();
  }

  @Test
  @DisplayName("segments wholly below what the coalescer still needs are deleted; the ones it needs are kept")
  void deletion() throws IOException {
    Journal journal = open();
    long[] needed = {0};
    loop.onLoop(() -> {
      journal.neededBy(() -> needed[0]);
      return null;
    });
    for (int round = 0; round < 20; round++) {
      loop.accept(journal, "d" + round + "-", 1_500);
    }
    assertThat(segments()).as("segments of %d KiB", SEGMENT / 1024).hasSizeGreaterThan(3);
    loop.onLoop(() -> {
      journal.release();
      return null;
    });
    int kept = segments().size();
    assertThat(kept).as("segments kept while everything is needed").isGreaterThan(3);
    loop.onLoop(() -> {
      needed[0] = journal.position();
      journal.release();
      return null;
    });
    loop.close(journal, false);
    assertThat(segments()).as("segments left once nothing is needed").hasSize(1);
  }

  @Test
  @DisplayName("past journal.maxBytes, new increments are refused with 503 journal_full before anything is taken")
  void byteBound() {
    Journal journal = open(options(JournalOptions.Fsync.ALWAYS, 2 * SEGMENT));
    long[] needed = {0};
    loop.onLoop(() -> {
      journal.neededBy(() -> needed[0]);
      return null;
    });
    Throwable refused = null;
    for (int round = 0; round < 1_000 && refused == null; round++) {
      int from = round * 100;
      // as requests arrive: a hundred per event-loop turn, each turn's answers awaited
      refused = loop.onLoop(() -> {
        try {
          for (int i = from; i < from + 100; i++) {
            Increment increment = like("full" + i, 1);
            journal.checkRoom(JournalRecords.estimate(increment));
            journal.appendIncrement(increment);
          }
          return null;
        } catch (ApiError e) {
          return e;
        }
      });
      await(loop.onLoop(journal::committed));
      loop.timers.advance(Duration.ofMillis(100)); // the next turn comes later: what is held may be counted again
    }
    assertThat(refused).isInstanceOf(ApiError.class);
    assertThat(((ApiError) refused).status()).isEqualTo(503);
    assertThat(((ApiError) refused).code()).isEqualTo("journal_full");
    assertThat(loop.fullChanges).as("told full").containsExactly(true);
    await(loop.onLoop(journal::committed));
    // once the coalescer needs nothing, the bytes are released and increments are taken again
    loop.onLoop(() -> {
      needed[0] = journal.position();
      journal.release();
      journal.checkRoom(100);
      return null;
    });
    assertThat(loop.fullChanges).as("told full, then not").containsExactly(true, false);
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
      loop.accept(journal, policy + "-", 1_000);
      assertThat(await(loop.onLoop(journal::committed))).as("answered again, nothing new appended").isNull();
      await(loop.onLoop(journal::force));
      loop.close(journal, false);
      Journal reopened = open(options(policy, 1 << 30));
      assertThat(reopened.recovered().pending()).as(policy.toString()).hasSize(1_000);
      loop.close(reopened, true);
      assertThat(segments()).as("segments after a close with nothing held").isEmpty();
    }
  }

  @Test
  @DisplayName("after a close, nothing appended is answered, and a second close is the first")
  void closed() {
    Journal journal = open();
    loop.accept(journal, "c", 3);
    Flush flush = new Flush(FlushId.parse("src:1"), List.of(new FlushRow("likes", "c0", (short) 0, 1)));
    assertThat(await(loop.onLoop(journal::committed))).as("everything appended is answered").isNull();
    loop.close(journal, false);
    assertThat(loop.onLoop(() -> journal.close(false)).isComplete()).isTrue();
    assertThat(await(loop.onLoop(journal::force))).as("forced before the close").isNull();
    assertThat(await(loop.onLoop(journal::committed))).as("answered before the close").isNull();
    long first = loop.onLoop(() -> journal.appendIncrement(like("late", 1)));
    long second = loop.onLoop(() -> journal.appendIncrement(like("late", 1)));
    assertThat(loop.onLoop(journal::position) - second).as("one record's bytes, each time").isEqualTo(second - first);
    assertThatThrownBy(() -> await(loop.onLoop(journal::committed))).hasMessageContaining("closed");
    assertThatThrownBy(() -> await(loop.onLoop(journal::force))).hasMessageContaining("closed");
    assertThatThrownBy(() -> await(loop.onLoop(() -> journal.formed(flush, List.of()))))
      .hasMessageContaining("cannot record the flush src:1");
    assertThat(loop.refusal(journal, 100).code()).isEqualTo("journal_unavailable");
  }

  @Test
  @DisplayName("the journal is confined to the event loop that opened it")
  void confined() {
    Journal journal = open();
    assertThatThrownBy(() -> journal.checkRoom(1)).hasMessageContaining("event loop");
  }

  @Test
  @DisplayName("after a failed force nothing more is answered or recorded, no flush is let through, and every segment stays for the replay")
  void failedForce() throws IOException {
    Journal journal = open();
    long[] needed = {0};
    loop.onLoop(() -> {
      journal.neededBy(() -> needed[0]);
      return null;
    });
    loop.accept(journal, "kept", 50);
    Flush formed = new Flush(FlushId.parse("src:8"), List.of(new FlushRow("likes", "kept1", (short) 0, 1)));
    await(loop.onLoop(() -> journal.formed(formed, List.of())));
    Flush flush = new Flush(FlushId.parse("src:9"), List.of(new FlushRow("likes", "kept0", (short) 0, 1)));
    loop.onLoop(() -> {
      journal.fail(new java.io.UncheckedIOException(new IOException("EIO, as a failing disk answers")));
      return null;
    });
    assertThatThrownBy(() -> await(loop.onLoop(() -> journal.formed(flush, List.of()))))
      .as("a flush the journal cannot record is not attempted").hasRootCauseMessage("the journal cannot record the flush src:9");
    assertThatThrownBy(() -> await(loop.onLoop(() -> journal.replaced(formed, List.of()))))
      .hasRootCauseMessage("the journal cannot record the split of src:8");
    assertThatThrownBy(() -> await(loop.onLoop(journal::committed))).hasMessageContaining("journal");
    assertThatThrownBy(() -> await(loop.onLoop(journal::force))).hasMessageContaining("journal");
    assertThat(loop.refusal(journal, 100).code()).isEqualTo("journal_unavailable");
    assertThat(loop.fullChanges).as("readiness told").containsExactly(true);
    loop.onLoop(() -> {
      needed[0] = journal.position();
      journal.release();
      return null;
    });
    loop.close(journal, true);
    assertThat(segments()).as("segments after a failure and a close with nothing held").isNotEmpty();
    Journal.Recovered recovered = open().recovered();
    assertThat(recovered.pending()).hasSize(49).doesNotContainKey(key("kept1"));
    assertThat(recovered.unsettled()).containsExactly(formed);
  }

  @Test
  @DisplayName("a journal holding unsettled work for another table is refused at start, naming database.table and journal.dir")
  void otherTable() {
    Journal journal = open();
    loop.accept(journal, "t", 3);
    loop.close(journal, false);
    assertThatThrownBy(() -> loop.open(JournalFiles.disk(), options(JournalOptions.Fsync.ALWAYS, 1 << 30), "renamed"))
      .rootCause().isInstanceOf(ConfigException.class)
      .hasMessageContaining("database.table").hasMessageContaining("journal.dir").hasMessageContaining("'slotted_counters'")
      .hasMessageContaining("3 counters");
    Journal same = open();
    assertThat(same.recovered().pending()).hasSize(3);
    loop.onLoop(() -> {
      same.neededBy(same::position);
      return null;
    });
    loop.close(same, true);
    // with nothing held, the table is free to change
    Journal renamed = loop.open(JournalFiles.disk(), options(JournalOptions.Fsync.ALWAYS, 1 << 30), "renamed");
    assertThat(renamed.recovered().pending()).isEmpty();
  }

  @Test
  @DisplayName("files of another table that hold nothing unsettled any more start under a new table; files holding only an unsettled flush are refused, naming it")
  void otherTableHoldingOnlyAFlush() {
    Flush flush = new Flush(FlushId.parse("src:1"), List.of(new FlushRow("likes", "x", (short) 0, 3)));
    Journal journal = open();
    loop.onLoop(() -> {
      journal.appendIncrement(like("x", 3));
      return journal.formed(flush, List.of());
    });
    await(loop.onLoop(journal::committed));
    loop.close(journal, false);
    JournalOptions options = options(JournalOptions.Fsync.ALWAYS, 1 << 30);
    assertThatThrownBy(() -> loop.open(JournalFiles.disk(), options, "renamed"))
      .rootCause().isInstanceOf(ConfigException.class)
      .hasMessageContaining("holds 0 counters and 1 flushes").hasMessageContaining("'slotted_counters'");

    Journal same = open();
    assertThat(same.recovered().unsettled()).containsExactly(flush);
    loop.onLoop(() -> {
      same.settled(flush.id().toString());
      return same.force();
    });
    await(loop.onLoop(same::force));
    loop.close(same, false); // a crash: the files stay, holding nothing unsettled
    Journal renamed = loop.open(JournalFiles.disk(), options, "renamed");
    assertThat(renamed.recovered().pending()).isEmpty();
    assertThat(renamed.recovered().unsettled()).isEmpty();
  }

  @Test
  @DisplayName("a flush recorded as never sent is still known as never sent after a second replay: the first replay's snapshot carries it")
  void neverSentCarriedBySnapshots() {
    Flush flush = new Flush(FlushId.parse("src:1"), List.of(new FlushRow("likes", "x", (short) 0, 3)));
    Flush sent = new Flush(FlushId.parse("src:2"), List.of(new FlushRow("likes", "y", (short) 0, 4)));
    Journal journal = open();
    loop.onLoop(() -> {
      journal.appendIncrement(like("x", 3));
      journal.appendIncrement(like("y", 4));
      journal.formed(flush, List.of());
      journal.formed(sent, List.of());
      journal.notSent(flush.id().toString());
      return null;
    });
    await(loop.onLoop(journal::force));
    loop.close(journal, false);

    Journal first = open();
    assertThat(first.recovered().unsettled()).containsExactlyInAnyOrder(flush, sent);
    assertThat(first.recovered().neverSent()).containsExactly(flush.id());
    loop.close(first, false);
    Journal second = open();
    assertThat(second.recovered().unsettled()).containsExactlyInAnyOrder(flush, sent);
    assertThat(second.recovered().neverSent()).containsExactly(flush.id());
  }

  @Test
  @DisplayName("journal.enabled false over a directory holding segments is refused, naming journal.enabled and journal.dir")
  void disabledOverSegments() {
    JsonObject config = new JsonObject().put("journal", new JsonObject().put("dir", dir.toString()).put("enabled", false))
      .put("namespaces", new JsonObject().put("likes", new JsonObject()));
    JournalOptions disabled = GatewayConfig.fromJson(config).getJournal();
    Journal.refuseIfHeld(disabled); // an empty directory
    Journal.refuseIfHeld(JournalOptions.of(dir.resolve("missing").toString(), JournalOptions.Fsync.ALWAYS, SEGMENT,
      1 << 30));
    Journal journal = open();
    loop.accept(journal, "held", 2);
    loop.close(journal, false);
    assertThatThrownBy(() -> Journal.refuseIfHeld(disabled)).isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("journal.enabled: is false, but journal.dir").hasMessageContaining("journal-*.seg");
    Journal.refuseIfHeld(options(JournalOptions.Fsync.ALWAYS, 1 << 30)); // enabled: the replay takes them
  }

  @Test
  @DisplayName("journal.enabled false over a directory holding only a snapshot a crash left unfinished starts")
  void disabledOverATemporaryFile() throws IOException {
    JsonObject config = new JsonObject().put("journal", new JsonObject().put("dir", dir.toString()).put("enabled", false))
      .put("namespaces", new JsonObject().put("likes", new JsonObject()));
    Files.write(dir.resolve(SegmentFiles.fileName(0, 3) + ".tmp"), new byte[10]);
    Journal.refuseIfHeld(GatewayConfig.fromJson(config).getJournal());
  }

  @Test
  @DisplayName("a journal directory removed while running is noticed: accepted increments get 503, readiness turns 503, and flushes are still recorded so the drain can write what is held")
  void directoryRemoved() throws IOException {
    Journal journal = open();
    loop.accept(journal, "before", 3);
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
    }
    assertThat(Files.exists(dir)).isFalse();
    loop.onLoop(() -> {
      journal.release(); // the once-a-second tick asks the writer to check the directory
      return null;
    });
    Eventually.until("the removal noticed", () -> loop.onLoop(journal::unreachable));
    assertThat(loop.refusal(journal, 100)).isNotNull().extracting(ApiError::code).isEqualTo("journal_unavailable");
    assertThat(loop.fullChanges).last().isEqualTo(true);
    assertThat(JournalLoop.failure(loop.onLoop(journal::committed))).as("no answer is given as kept").isNotNull();
    Flush flush = new Flush(FlushId.parse("src-0:1"), List.of(new FlushRow("likes", "before0", (short) 0, 1)));
    await(loop.onLoop(() -> journal.formed(flush, List.of())));
    loop.close(journal, false);
  }
}
