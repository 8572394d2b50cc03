package io.countergateway.testing;

import io.countergateway.internal.model.CounterKey;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one oracle of "an answered increment is counted exactly once" (src/DESIGN.md §4): what every request was
 * answered, held against what the table holds, per counter id:
 * <pre>
 *   answered ≤ SUM ≤ answered + unknown
 * </pre>
 * where <em>answered</em> is the delta of the requests answered as counted (200, 202, 204), <em>unknown</em> the delta
 * of those whose answer never arrived or was 504 {@code outcome_unknown}, and a refusal (503, or a 4xx where a test
 * allows one) adds nothing to either side. No id may be in the table that no request sent.
 * <p>
 * It takes outcomes from any source: HTTP and event-bus loads of the integration tests ({@link #http}, {@link #bus}),
 * or outcomes recorded in-process by a unit-tier harness ({@link #record}) against {@link ScriptedStore#table}
 * ({@link #sums(Map)}). Recording is thread-safe; {@link #against} is called once the load has ended.
 */
public final class Ledger {
  /** What an answer promises about the increment it answered. */
  public enum Promise {
    /** 200, 202, 204: counted exactly once (a 202/204 once the gateway drained or replayed). */
    COUNTED,
    /** A refusal: nothing was taken. */
    NOT_COUNTED,
    /** No answer, or 504 {@code outcome_unknown}: counted at most once. */
    AT_MOST_ONCE
  }

  /** The way a request came in, which decides the status its success is answered with. */
  public enum Door {
    COMMIT(200, "ack=commit"),
    ACCEPTED(202, "ack=accepted"),
    BEACON(204, "beacon"),
    BUS_REQUEST(200, "bus request"),
    /** An event-bus send: no answer by design. */
    BUS_SEND(0, "bus send");

    final int success;
    final String label;

    Door(int success, String label) {
      this.success = success;
      this.label = label;
    }
  }

  private final String label;
  private final Map<String, long[]> byId = new HashMap<>();
  /** Each id's answers in the order recorded: a violation names them, so a loss says which door and answer it was. */
  private final Map<String, String> answersById = new HashMap<>();
  private final Map<String, Integer> answers = new TreeMap<>();
  private final List<String> flagged = new ArrayList<>();
  private boolean clientErrorsRefuse;
  private int requests;

  private Ledger(String label) {
    this.label = label;
  }

  public static Ledger named(String label) {
    return new Ledger(label);
  }

  /** A 4xx answer is a refusal (nothing taken) rather than a violation: for loads whose doors may answer one. */
  public synchronized Ledger clientErrorsAreRefusals() {
    clientErrorsRefuse = true;
    return this;
  }

  /**
   * One request's outcome: {@code delta} of counter {@code id} answered {@code answer} (a tally key such as
   * {@code "202"}, {@code "503 journal_unavailable"} or {@code "no answer"}), which promises {@code promise}.
   */
  public synchronized Ledger record(String id, long delta, Promise promise, String answer) {
    requests++;
    answers.merge(answer, 1, Integer::sum);
    answersById.merge(id, answer, (earlier, later) -> earlier + ", " + later);
    long[] bounds = byId.computeIfAbsent(id, k -> new long[2]);
    switch (promise) {
      case COUNTED -> bounds[0] += delta;
      case AT_MOST_ONCE -> bounds[1] += delta;
      case NOT_COUNTED -> {
      }
    }
    return this;
  }

  /** A violation seen while recording (a status the contract does not allow), reported with the table's. */
  public synchronized Ledger flag(String violation) {
    flagged.add(violation);
    return this;
  }

  /** An HTTP request of delta 1; {@code status} 0 when no answer came, -1 when the request never finished. */
  public Ledger http(String id, Door door, int status, String error) {
    return http(id, 1, door, status, error);
  }

  /**
   * An HTTP request: 200/202/204 must be its door's success status; 504 must be {@code outcome_unknown}; 503 is a
   * refusal; a 4xx is a violation unless {@link #clientErrorsAreRefusals()}; any other status is a violation (and
   * counted at most once, since nothing then says what it did).
   */
  public synchronized Ledger http(String id, long delta, Door door, int status, String error) {
    String what = id + " (" + door.label + ", status " + status + (error == null ? "" : ", " + error) + ")";
    switch (status) {
      case 200, 202, 204 -> {
        if (status != door.success) {
          flag("a " + status + " for a " + door.label + " request: " + what);
        }
        record(id, delta, Promise.COUNTED, Integer.toString(status));
      }
      case 503 -> record(id, delta, Promise.NOT_COUNTED, "503 " + error);
      case 504 -> {
        if (!"outcome_unknown".equals(error)) {
          flag("a 504 that is not outcome_unknown: " + what);
        }
        record(id, delta, Promise.AT_MOST_ONCE, "504 " + error);
      }
      case 0 -> record(id, delta, Promise.AT_MOST_ONCE, "no answer");
      case -1 -> {
        flag(what + " never finished");
        record(id, delta, Promise.AT_MOST_ONCE, "never finished");
      }
      default -> {
        if (status >= 400 && status < 500) {
          if (!clientErrorsRefuse) {
            flag("a " + status + " the load does not expect: " + what);
          }
          record(id, delta, Promise.NOT_COUNTED, status + " " + error);
        } else {
          flag("a status the contract does not answer: " + what);
          record(id, delta, Promise.AT_MOST_ONCE, status + " " + error);
        }
      }
    }
    return this;
  }

  /** An event-bus request answered 200, refused (a failure code, with the HTTP status it maps to), or unanswered (0). */
  public Ledger bus(String id, Door door, int status, String error) {
    if (door == Door.BUS_SEND) {
      return record(id, 1, Promise.AT_MOST_ONCE, "bus send (no answer by design)");
    }
    return http(id, 1, door, status, error);
  }

  /** SUM(count) per {@code type/id} of a {@link ScriptedStore}'s table, for ledgers keyed by {@link #key}. */
  public static Map<String, Long> sums(Map<CounterKey, BigInteger> table) {
    Map<String, Long> sums = new HashMap<>();
    table.forEach((counter, value) -> sums.merge(key(counter.type(), counter.id()), value.longValueExact(), Long::sum));
    return sums;
  }

  /** The ledger key of a counter, where a harness records several namespaces in one ledger. */
  public static String key(String type, String id) {
    return type + "/" + id;
  }

  /** Holds the recorded outcomes against {@code sums} (SUM(count) per id, ids of this ledger only). */
  public synchronized Verdict against(Map<String, Long> sums) {
    return new Verdict(this, sums);
  }

  /** What the table says of the recorded outcomes. */
  public static final class Verdict {
    public final String label;
    /** Requests recorded. */
    public final int requests;
    /** Requests per answer ({@code "202"}, {@code "503 shed"}, {@code "no answer"}…). */
    public final Map<String, Integer> answers;
    /** The delta answered as counted (the lower bound of SUM). */
    public final long answered;
    /** The delta whose outcome was unknown, and how much of it landed. */
    public final long unknown;
    public final long unknownLanded;
    /** SUM over every id of the table given. */
    public final long sum;
    /** Ids above their upper bound: counted twice, or counted though refused. */
    public final int overCounted;
    /** Ids below their lower bound: an answered increment lost. */
    public final int lost;
    public final List<String> violations = new ArrayList<>();

    private Verdict(Ledger ledger, Map<String, Long> sums) {
      this.label = ledger.label;
      this.requests = ledger.requests;
      this.answers = new TreeMap<>(ledger.answers);
      violations.addAll(ledger.flagged);
      long answeredTotal = 0;
      long unknownTotal = 0;
      long landed = 0;
      int over = 0;
      int under = 0;
      for (Map.Entry<String, long[]> entry : new TreeMap<>(ledger.byId).entrySet()) {
        String id = entry.getKey();
        long low = entry.getValue()[0];
        long high = low + entry.getValue()[1];
        long counted = sums.getOrDefault(id, 0L);
        answeredTotal += low;
        unknownTotal += entry.getValue()[1];
        landed += Math.max(0, Math.min(counted, high) - low);
        if (counted < low) {
          under++;
          violations.add(id + " is counted " + counted + ", below the " + low + " answered as counted ("
            + ledger.answersById.get(id) + ")");
        } else if (counted > high) {
          over++;
          violations.add(id + " is counted " + counted + ", above the " + low + " answered + " + (high - low)
            + " unknown");
        }
      }
      Set<String> unseen = new TreeSet<>(sums.keySet());
      unseen.removeAll(ledger.byId.keySet());
      for (String id : unseen) {
        over++;
        violations.add("id " + id + " is in the table (" + sums.get(id) + ") but no request sent it");
      }
      this.answered = answeredTotal;
      this.unknown = unknownTotal;
      this.unknownLanded = landed;
      this.sum = sums.values().stream().mapToLong(Long::longValue).sum();
      this.overCounted = over;
      this.lost = under;
    }

    /** Requests answered {@code answer} exactly ({@code "202"}, {@code "503 shed"}), or with it as the status ({@code "503"}). */
    public int count(String answer) {
      return answers.entrySet().stream()
        .filter(e -> e.getKey().equals(answer) || e.getKey().startsWith(answer + " "))
        .mapToInt(Map.Entry::getValue).sum();
    }

    /** The error codes of the answers with {@code status}, e.g. {@code [shutting_down]} for 503. */
    public Set<String> reasons(int status) {
      Set<String> reasons = new TreeSet<>();
      String prefix = status + " ";
      answers.keySet().stream().filter(a -> a.startsWith(prefix)).forEach(a -> reasons.add(a.substring(prefix.length())));
      return reasons;
    }

    /** requests / answers / answered / unknown (landed) / SUM / over- and under-counted ids; one line. */
    public String summary() {
      return "[" + label + "] requests=" + requests + " " + answers + " answered=" + answered + " unknown=" + unknown
        + " (landed " + unknownLanded + ") SUM=" + sum + " overCounted=" + overCounted + " lost=" + lost;
    }

    /** Fails with the first violations, if any. */
    public Verdict assertHolds() {
      List<String> first = violations.subList(0, Math.min(20, violations.size()));
      assertThat(violations).as("%s: %d violations, the first: %s", summary(), violations.size(), first).isEmpty();
      return this;
    }

    /** {@link #assertHolds()}, and every request was answered (none lost its answer, none is unknown for that). */
    public Verdict assertHoldsAllAnswered() {
      assertHolds();
      assertThat(count("no answer")).as("%s: requests the gateway never answered", summary()).isZero();
      return this;
    }
  }
}
