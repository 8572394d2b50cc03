package io.countergateway.internal.write.journal;

import io.countergateway.config.ConfigException;
import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.countergateway.internal.write.journal.JournalLoop.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the journal checks at start about where its held work belongs: the database, the table, the windows. */
@DisplayName("The journal's target")
class JournalTargetTest {
  private static final Path DIR = Path.of("/var/lib/counter-gateway/journal");
  private static final JournalTarget POSTGRES = new JournalTarget("postgres", "db1", 5432, "counters", "slotted_counters",
    "id-a", Map.of("likes", "plain", "views", "hour"));
  private static final JournalTarget.Held THREE_HELD = JournalTarget.Held.of(List.of(new CounterKey("likes", "a"),
    new CounterKey("likes", "b"), new CounterKey("views", "p", 3_600)), List.of());

  @TempDir
  Path dir;
  private final JournalLoop loop = new JournalLoop();

  @AfterEach
  void tearDown() throws Exception {
    loop.close();
  }

  private static JournalTarget with(String kind, String host, int port, String name, String id,
                                    Map<String, String> windows) {
    return new JournalTarget(kind, host, port, name, "slotted_counters", id, windows);
  }

  private static String refusal(JournalTarget now, JournalTarget heldFor, JournalTarget.Held held) {
    ConfigException refused = now.refusal(heldFor, held, DIR);
    return refused == null ? null : refused.getMessage();
  }

  @Test
  @DisplayName("another database kind, host or name with work held is refused naming that key and the counts held")
  void anotherDatabase() {
    assertThat(refusal(with("mysql", "db1", 3306, "counters", "id-b", POSTGRES.windows()), POSTGRES, THREE_HELD))
      .startsWith("database.kind: is 'mysql', but the journal in journal.dir (" + DIR + ") holds 3 counters and 0 "
        + "flushes").contains("set database.kind back to 'postgres'");
    assertThat(refusal(with("postgres", "db1", 5433, "counters", "id-b", POSTGRES.windows()), POSTGRES, THREE_HELD))
      .startsWith("database.port: is '5433'");
    assertThat(refusal(with("postgres", "db1", 5432, "other", "id-b", POSTGRES.windows()), POSTGRES, THREE_HELD))
      .startsWith("database.name: is 'other'");
    assertThat(refusal(with("postgres", "db1", 5432, "counters", "id-b", POSTGRES.windows()), POSTGRES, THREE_HELD))
      .as("the same address, a database made anew").startsWith("database.host: the database at postgres at "
        + "db1:5432/counters, database id id-b is another than the one the journal was written for");
  }

  @Test
  @DisplayName("the same database id reached by another name is the same database; an empty journal takes any target")
  void sameDatabaseOrNothingHeld() {
    assertThat(refusal(with("postgres", "db1-replica", 6432, "counters", "id-a", POSTGRES.windows()), POSTGRES,
      THREE_HELD)).isNull();
    JournalTarget.Held nothing = JournalTarget.Held.of(List.of(), List.of());
    assertThat(refusal(with("mysql", "db2", 3306, "x", "id-z", Map.of("likes", "day")), POSTGRES, nothing)).isNull();
  }

  @Test
  @DisplayName("without the database's id on one side, the configured endpoint decides; the embedded port is its own")
  void unknownIds() {
    assertThat(refusal(with("postgres", "db1", 5432, "counters", null, POSTGRES.windows()), POSTGRES, THREE_HELD))
      .isNull();
    assertThat(refusal(with("postgres", "db2", 5432, "counters", null, POSTGRES.windows()), POSTGRES, THREE_HELD))
      .startsWith("database.host: is 'db2' (the database did not answer, so it cannot prove it is the same one)");
    JournalTarget embedded = with("embedded-postgres", "127.0.0.1", 41_000, "counters", null, POSTGRES.windows());
    assertThat(refusal(with("embedded-postgres", "127.0.0.1", 42_000, "counters", null, POSTGRES.windows()),
      embedded, THREE_HELD)).isNull();
    assertThat(refusal(with("mysql", "db1", 3306, "counters", "id-b", POSTGRES.windows()), null, THREE_HELD))
      .as("a journal of the release before records no target: it is replayed").isNull();
  }

  @Test
  @DisplayName("a namespace switched between plain and windowed, or to another bucket, with work held is refused naming its window")
  void windowChanged() {
    Map<String, String> likesHourly = Map.of("likes", "hour", "views", "hour");
    assertThat(refusal(with("postgres", "db1", 5432, "counters", "id-a", likesHourly), POSTGRES, THREE_HELD))
      .startsWith("namespaces.likes.window: is hour buckets, but the journal in journal.dir").contains("holds 3 "
        + "counters and 0 flushes not yet written, 2 of them of namespace 'likes', taken not set (plain counters)");
    assertThat(refusal(with("postgres", "db1", 5432, "counters", "id-a", Map.of("likes", "plain", "views", "day")),
      POSTGRES, THREE_HELD)).startsWith("namespaces.views.window: is day buckets").contains("taken hour buckets");
    assertThat(refusal(with("postgres", "db1", 5432, "counters", "id-a", likesHourly), null, THREE_HELD))
      .as("without a recorded target, the keys' shape tells plain from windowed")
      .startsWith("namespaces.likes.window: is hour buckets").contains("taken as plain counters");
    assertThat(refusal(with("postgres", "db1", 5432, "counters", "id-a", Map.of("views", "hour")), POSTGRES, THREE_HELD))
      .as("a namespace no longer declared is the coalescer's to refuse").isNull();
  }

  @Test
  @DisplayName("a run that did not reach its database records the database its held work was written for")
  void recordedWithoutTheDatabase() {
    JournalTarget unreached = with("postgres", "db1", 5432, "counters", null, POSTGRES.windows());
    assertThat(unreached.recorded(POSTGRES, THREE_HELD).databaseId()).isEqualTo("id-a");
    assertThat(unreached.recorded(POSTGRES, JournalTarget.Held.of(List.of(), List.of())).databaseId()).isNull();
    JournalTarget reached = with("postgres", "db1", 5432, "counters", "id-b", POSTGRES.windows());
    assertThat(reached.recorded(POSTGRES, JournalTarget.Held.of(List.of(), List.of()))).isEqualTo(reached);
  }

  @Test
  @DisplayName("work held is refused another database whether it is increments alone or an unsettled flush alone")
  void eitherKindOfWorkHeldIsRefused() {
    JournalTarget mysql = with("mysql", "db1", 3306, "counters", "id-b", POSTGRES.windows());
    Flush flush = new Flush(FlushId.parse("src-0:1"), List.of(new FlushRow("likes", "f", (short) 0, 4)));
    Journal journal = open(POSTGRES);
    loop.onLoop(() -> {
      journal.appendIncrement(new Increment(new CounterKey("likes", "f"), 4));
      return journal.formed(flush, List.of());
    });
    await(loop.onLoop(journal::committed));
    loop.close(journal, false);
    assertThatThrownBy(() -> open(mysql)).rootCause().isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("database.kind: is 'mysql'").hasMessageContaining("holds 0 counters and 1 flushes");

    Journal same = open(POSTGRES);
    loop.onLoop(() -> {
      same.settled("src-0:1");
      same.appendIncrement(new Increment(new CounterKey("likes", "held"), 2));
      return same.committed();
    });
    await(loop.onLoop(same::committed));
    loop.close(same, false);
    assertThatThrownBy(() -> open(mysql)).rootCause().isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("database.kind: is 'mysql'").hasMessageContaining("holds 1 counters and 0 flushes");
  }

  private Journal open(JournalTarget target) {
    JournalOptions options = JournalLoop.options(dir, JournalOptions.Fsync.ALWAYS, 64 * 1024, 1 << 30);
    return await(loop.onLoop(() -> Journal.open(loop.vertx, options, JournalFiles.disk(), target, 0, 1, full -> {
    })));
  }

  @Test
  @DisplayName("a journal holding an increment and an unsettled flush refuses another database at its next start, keeps it all, and an empty one takes the new database")
  void refusedAtOpenAndAdoptedWhenEmpty() {
    Journal journal = open(POSTGRES);
    Flush flush = new Flush(FlushId.parse("src-0:1"), List.of(new FlushRow("likes", "f", (short) 0, 4)));
    loop.onLoop(() -> {
      journal.appendIncrement(new Increment(new CounterKey("likes", "held"), 2));
      return journal.formed(flush, List.of());
    });
    await(loop.onLoop(journal::committed));
    loop.close(journal, false);

    JournalTarget mysql = with("mysql", "db1", 3306, "counters", "id-b", POSTGRES.windows());
    assertThatThrownBy(() -> open(mysql)).rootCause().isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("database.kind: is 'mysql'").hasMessageContaining("holds 1 counters and 1 flushes");
    JournalTarget viewsDaily = with("postgres", "db1", 5432, "counters", "id-a", Map.of("likes", "day", "views", "hour"));
    assertThatThrownBy(() -> open(viewsDaily)).rootCause().hasMessageStartingWith("namespaces.likes.window:");

    Journal same = open(POSTGRES);
    assertThat(same.recovered().pending()).containsEntry(new CounterKey("likes", "held"), 2L);
    assertThat(same.recovered().unsettled()).extracting(f -> f.id().toString()).containsExactly("src-0:1");
    assertThat(same.writtenFor()).isEqualTo(POSTGRES);
    loop.onLoop(() -> {
      same.settled("src-0:1");
      same.neededBy(same::position);
      return null;
    });
    loop.close(same, true);

    Journal moved = open(mysql);
    assertThat(moved.recovered().pending()).isEmpty();
    assertThat(moved.writtenFor()).isEqualTo(mysql);
    loop.close(moved, false);
  }
}
