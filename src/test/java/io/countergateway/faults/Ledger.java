package io.countergateway.faults;

import io.countergateway.faults.IncrementLoad.Outcome;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holds what every request of an {@link IncrementLoad} got against what the table holds for its counter id, and
 * checks the contract of src/DESIGN.md §4 request by request:
 * <ul>
 *   <li>200 (ack=commit) and 202 (ack=accepted, after the gateway drained): counted exactly once;</li>
 *   <li>503: not counted;</li>
 *   <li>504 {@code outcome_unknown}, and a request that got no answer at all: counted at most once;</li>
 *   <li>no id counted twice, no id in the table that no request sent, and SUM = 200s + 202s + the unknowns that
 *   landed.</li>
 * </ul>
 */
final class Ledger {
  final String label;
  int sent;
  int committed200;
  int accepted202;
  int refused503;
  int unknown504;
  int landed504;
  int noAnswer;
  int landedNoAnswer;
  int otherStatus;
  int countedTwice;
  long sum;
  final Map<String, Integer> refusals = new TreeMap<>();
  final Map<String, Integer> others = new TreeMap<>();
  final List<String> violations = new ArrayList<>();

  private Ledger(String label) {
    this.label = label;
  }

  static Ledger of(String label, List<Outcome> outcomes, Map<String, Long> sums) {
    Ledger ledger = new Ledger(label);
    Map<String, Long> unseen = new HashMap<>(sums);
    for (Outcome outcome : outcomes) {
      long counted = sums.getOrDefault(outcome.id, 0L);
      unseen.remove(outcome.id);
      ledger.record(outcome, counted);
    }
    unseen.forEach((id, counted) -> ledger.violation("id " + id + " is in the table (" + counted + ") but no request sent it"));
    ledger.sum = sums.values().stream().mapToLong(Long::longValue).sum();
    long expected = ledger.committed200 + ledger.accepted202 + ledger.landed504 + ledger.landedNoAnswer;
    if (ledger.sum != expected) {
      ledger.violation("SUM " + ledger.sum + " != 200s + 202s + landed 504s + landed unanswered = " + expected);
    }
    return ledger;
  }

  private void record(Outcome outcome, long counted) {
    sent++;
    if (counted > 1 || counted < 0) {
      countedTwice++;
      violation(outcome.id + " (status " + outcome.status + ") is counted " + counted + " times");
      return;
    }
    String mode = outcome.accepted ? "ack=accepted" : "ack=commit";
    switch (outcome.status) {
      case 200 -> {
        committed200++;
        expect(!outcome.accepted, outcome, "a 200 for an " + mode + " request");
        expect(counted == 1, outcome, "a 200 that is not counted");
      }
      case 202 -> {
        accepted202++;
        expect(outcome.accepted, outcome, "a 202 for an " + mode + " request");
        expect(counted == 1, outcome, "a 202 that is not counted after the drain");
      }
      case 503 -> {
        refused503++;
        refusals.merge(outcome.error, 1, Integer::sum);
        expect(counted == 0, outcome, "a 503 (" + outcome.error + ") that is counted");
      }
      case 504 -> {
        unknown504++;
        landed504 += (int) counted;
        expect("outcome_unknown".equals(outcome.error), outcome, "a 504 that is not outcome_unknown");
      }
      case 0 -> {
        noAnswer++;
        landedNoAnswer += (int) counted;
      }
      case -1 -> violation(outcome.id + " never finished");
      default -> {
        otherStatus++;
        others.merge(outcome.status + " " + outcome.error, 1, Integer::sum);
      }
    }
  }

  private void expect(boolean holds, Outcome outcome, String what) {
    if (!holds) {
      violation(what + ": " + outcome.id + " (" + (outcome.accepted ? "accepted" : "commit") + ", status "
        + outcome.status + ", " + outcome.error + ")");
    }
  }

  private void violation(String text) {
    violations.add(text);
  }

  /** sent / 200 / 202 / 503 / 504 / final SUM, plus the details; one line. */
  String summary() {
    return "[" + label + "] sent=" + sent + " 200=" + committed200 + " 202=" + accepted202 + " 503=" + refused503
      + " " + refusals + " 504=" + unknown504 + " (landed " + landed504 + ") noAnswer=" + noAnswer
      + " (landed " + landedNoAnswer + ") other=" + otherStatus + (others.isEmpty() ? "" : " " + others)
      + " SUM=" + sum + " countedTwice=" + countedTwice;
  }

  /** Fails with the first violations, if any; requests without an answer fail it unless {@code noAnswerAllowed}. */
  void assertHolds(boolean noAnswerAllowed) {
    List<String> first = violations.subList(0, Math.min(20, violations.size()));
    assertThat(violations).as("%s: %d violations, the first: %s", summary(), violations.size(), first).isEmpty();
    assertThat(otherStatus).as("%s: statuses other than 200/202/503/504", summary()).isZero();
    if (!noAnswerAllowed) {
      assertThat(noAnswer).as("%s: requests the gateway never answered", summary()).isZero();
    }
  }
}
