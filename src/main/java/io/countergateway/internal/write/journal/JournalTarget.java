package io.countergateway.internal.write.journal;

import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.JournalOptions;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.WindowOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What a journal's work was taken for (src/DESIGN.md §4 "Replay"): the database — its kind, where it was reached, and
 * the id it keeps in its schema ({@code <table>_identity}, step 010; null when it did not answer) —, the counters table,
 * and each declared namespace's window ({@value #PLAIN}, or its bucket). Every run records its own at the head of its
 * first segment (the {@code WRITTEN_FOR} record, after the snapshot), so a replay knows where what it holds belongs.
 *
 * <p>A start whose target differs where it matters while the journal holds work is refused ({@link #refusal}): written
 * into another database, the held increments would count where they were never taken, and an unsettled flush would
 * look for its id and its source where they never were (a source missing there reads as one pruned after a long
 * downtime, and the flush is dropped as outcome unknown). Written to a namespace whose window changed, they would land
 * where its reads no longer look. An empty journal takes the new target silently.
 *
 * <p>What matters for the database: its id, when both it and the journal's are known (so a database reached by
 * another name, or a replica promoted after a failover, is the same one); otherwise — the database did not answer at
 * this start, or the journal was written by a run that never reached it — the configured kind, host, port and name.
 */
public record JournalTarget(String kind, String host, int port, String name, String table, String databaseId,
                            Map<String, String> windows) {
  /** The window of a namespace without one. */
  static final String PLAIN = "plain";

  public JournalTarget {
    windows = Map.copyOf(windows);
  }

  /** The target of a gateway of {@code config} writing to the database that keeps {@code databaseId} (null: unknown). */
  public static JournalTarget of(GatewayConfig config, String databaseId) {
    DatabaseOptions database = config.getDatabase();
    Map<String, String> windows = new TreeMap<>();
    for (Map.Entry<String, NamespaceOptions> namespace : config.getNamespaces().entrySet()) {
      WindowOptions window = namespace.getValue().getWindow();
      windows.put(namespace.getKey(), window == null ? PLAIN : window.getBucket().label());
    }
    return new JournalTarget(kindName(database.getKind()), database.getHost(), database.getPort(), database.getName(),
      database.getTable(), databaseId, windows);
  }

  /** Only the table known: what the database and the namespaces are is not checked. */
  public static JournalTarget tableOnly(String table) {
    return new JournalTarget("", "", 0, "", table, null, Map.of());
  }

  static String kindName(DatabaseOptions.Kind kind) {
    return switch (kind) {
      case EMBEDDED_POSTGRES -> "embedded-postgres";
      case POSTGRES -> "postgres";
      case MYSQL -> "mysql";
    };
  }

  private boolean knowsDatabase() {
    return !kind.isEmpty();
  }

  /** What a journal holds, as far as the target check needs it. */
  record Held(int counters, int flushes, Map<String, Namespace> namespaces) {
    boolean isEmpty() {
      return counters == 0 && flushes == 0;
    }

    /** One namespace's part: its counters held (pending or in flush rows), and whether they are plain or bucketed. */
    record Namespace(long counters, boolean plain, boolean windowed) {
      Namespace plus(CounterKey key) {
        return new Namespace(counters + 1, plain || !key.windowed(), windowed || key.windowed());
      }
    }

    static Held of(Collection<CounterKey> pending, List<Flush> unsettled) {
      Map<String, Namespace> namespaces = new TreeMap<>();
      Namespace none = new Namespace(0, false, false);
      for (CounterKey key : pending) {
        namespaces.merge(key.type(), none.plus(key), (a, b) -> a.plus(key));
      }
      for (Flush flush : unsettled) {
        for (FlushRow row : flush.rows()) {
          CounterKey key = new CounterKey(row.type(), row.id(), row.bucket());
          namespaces.merge(key.type(), none.plus(key), (a, b) -> a.plus(key));
        }
      }
      return new Held(pending.size(), unsettled.size(), namespaces);
    }
  }

  /**
   * Null when the work {@code held} (written for {@code heldFor}; null for a journal of a release that did not record
   * it) may be written for this target; otherwise the refusal, naming the key that moved it and what is held.
   */
  ConfigException refusal(JournalTarget heldFor, Held held, Path dir) {
    if (held.isEmpty()) {
      return null;
    }
    String holds = "the journal in " + JournalOptions.DIR.name() + " (" + dir + ") holds " + held.counters()
      + " counters and " + held.flushes() + " flushes not yet written";
    String giveUp = " until a clean stop has written them, or move the journal-*.seg files out of "
      + JournalOptions.DIR.name() + " to give them up";
    if (heldFor != null && heldFor.knowsDatabase() && knowsDatabase()) {
      String moved = movedKey(heldFor);
      if (moved != null) {
        String unproven = databaseId == null ? " (the database did not answer, so it cannot prove it is the same one)"
          : "";
        if (moved.equals(DatabaseOptions.HOST.name()) && Objects.equals(host, heldFor.host)) {
          return new ConfigException(moved, "the database at " + describe() + " is another than the one the journal "
            + "was written for (" + heldFor.describe() + "; made anew, or another server at that address), and "
            + holds + ": point " + moved + ", " + DatabaseOptions.PORT.name() + " and " + DatabaseOptions.NAME.name()
            + " at that database" + giveUp);
        }
        return new ConfigException(moved, "is '" + value(moved) + "'" + unproven + ", but " + holds + " to "
          + heldFor.describe() + ": set " + moved + " back to '" + heldFor.value(moved) + "'" + giveUp);
      }
    }
    for (Map.Entry<String, Held.Namespace> namespace : held.namespaces().entrySet()) {
      String now = windows.get(namespace.getKey());
      if (now == null) {
        continue; // not declared any more: the coalescer refuses that, naming the namespace
      }
      Held.Namespace part = namespace.getValue();
      String then = heldFor == null ? null : heldFor.windows.get(namespace.getKey());
      boolean shapeDiffers = now.equals(PLAIN) ? part.windowed() : part.plain();
      if (shapeDiffers || then != null && !then.equals(now)) {
        String key = "namespaces." + namespace.getKey() + ".window";
        String taken = then != null ? windowText(then) : part.windowed() ? "in buckets" : "as plain counters";
        return new ConfigException(key, "is " + windowText(now) + ", but " + holds + ", " + part.counters()
          + " of them of namespace '" + namespace.getKey() + "', taken " + taken + ": set " + key + " back"
          + giveUp);
      }
    }
    return null;
  }

  /**
   * The first key whose change took the database away from the journal's: none while both ids are known and equal.
   * With both ids known and different but the same configuration, the database there was replaced: its host is named.
   */
  private String movedKey(JournalTarget heldFor) {
    boolean ids = databaseId != null && heldFor.databaseId != null;
    if (ids && databaseId.equals(heldFor.databaseId)) {
      return null;
    }
    for (String key : List.of(DatabaseOptions.KIND.name(), DatabaseOptions.HOST.name(), DatabaseOptions.PORT.name(),
      DatabaseOptions.NAME.name())) {
      // the embedded database takes a port of its own at each start
      boolean embeddedPort = key.equals(DatabaseOptions.PORT.name()) && kind.equals("embedded-postgres")
        && heldFor.kind.equals("embedded-postgres");
      if (!embeddedPort && !value(key).equals(heldFor.value(key))) {
        return key;
      }
    }
    return ids ? DatabaseOptions.HOST.name() : null;
  }

  private String value(String key) {
    if (key.equals(DatabaseOptions.KIND.name())) {
      return kind;
    }
    if (key.equals(DatabaseOptions.HOST.name())) {
      return host;
    }
    return key.equals(DatabaseOptions.PORT.name()) ? Integer.toString(port) : name;
  }

  private String describe() {
    return kind + " at " + host + ":" + port + "/" + name + (databaseId == null ? "" : ", database id " + databaseId);
  }

  private static String windowText(String window) {
    return window.equals(PLAIN) ? "not set (plain counters)" : window + " buckets";
  }

  /**
   * What this run records: this target, but for a database that did not answer, the database the held work was
   * written for (this run's work goes there too, once it answers and proves to be it).
   */
  JournalTarget recorded(JournalTarget heldFor, Held held) {
    if (databaseId != null || heldFor == null || held.isEmpty() || !heldFor.knowsDatabase()) {
      return this;
    }
    return new JournalTarget(heldFor.kind, heldFor.host, heldFor.port, heldFor.name, table, heldFor.databaseId, windows);
  }
}
