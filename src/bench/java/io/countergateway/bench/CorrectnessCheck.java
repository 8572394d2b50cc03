package io.countergateway.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * Reads the counters back and compares them with what the writers were told: every counter must hold at least
 * its acknowledged increments and at most those plus its increments of unknown outcome. Up to
 * {@value #CHECK_EVERY_COUNTER_UP_TO} counters each one is read; beyond, a sample of {@value #SAMPLE} (counter 0
 * included) and the total over all of them. Blocking.
 */
final class CorrectnessCheck {
  static final int CHECK_EVERY_COUNTER_UP_TO = 100_000;
  static final int SAMPLE = 1_000;
  private static final int CHUNK = 1_000;

  /** The verdict and what it is based on. */
  record Verdict(boolean ok, String text) {
  }

  private CorrectnessCheck() {
  }

  static Verdict run(Strategy strategy, CounterBook book) throws Exception {
    int counters = book.counters();
    List<Integer> checked = counters <= CHECK_EVERY_COUNTER_UP_TO
      ? IntStream.range(0, counters).boxed().toList() : sample(counters);
    long mismatches = 0;
    String first = null;
    for (int from = 0; from < checked.size(); from += CHUNK) {
      List<Integer> chunk = checked.subList(from, Math.min(checked.size(), from + CHUNK));
      Map<Integer, Long> values = strategy.values(chunk).await(120, TimeUnit.SECONDS);
      for (int counter : chunk) {
        long actual = values.getOrDefault(counter, 0L);
        long low = book.acknowledged(counter);
        long high = low + book.unknown(counter);
        if (actual < low || actual > high) {
          mismatches++;
          if (first == null) {
            first = "counter " + counter + " holds " + actual + ", expected " + range(low, high);
          }
        }
      }
    }
    long total = strategy.total().await(120, TimeUnit.SECONDS);
    long low = book.acknowledgedTotal();
    long high = low + book.unknownTotal();
    boolean totalOk = total >= low && total <= high;
    String scope = counters <= CHECK_EVERY_COUNTER_UP_TO
      ? (counters == 1 ? "the counter" : "all " + counters + " counters")
      : checked.size() + " sampled counters of " + counters;
    if (mismatches == 0 && totalOk) {
      return new Verdict(true, "ok: " + scope + " and the total (" + String.format("%,d", total) + ") match "
        + range(low, high) + " acknowledged");
    }
    StringBuilder text = new StringBuilder("MISMATCH: ");
    if (mismatches > 0) {
      text.append(mismatches).append(" of ").append(scope).append(" wrong, e.g. ").append(first).append("; ");
    }
    text.append("total ").append(String.format("%,d", total)).append(", expected ").append(range(low, high));
    return new Verdict(false, text.toString());
  }

  private static String range(long low, long high) {
    return low == high ? String.format("%,d", low) : String.format("%,d..%,d", low, high);
  }

  private static List<Integer> sample(int counters) {
    List<Integer> picked = new ArrayList<>(SAMPLE);
    picked.add(0);
    ThreadLocalRandom random = ThreadLocalRandom.current();
    random.ints(1, counters).distinct().limit(SAMPLE - 1).forEach(picked::add);
    return picked;
  }
}
