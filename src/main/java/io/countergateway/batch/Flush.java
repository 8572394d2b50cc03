package io.countergateway.batch;

import java.util.List;
import java.util.function.UnaryOperator;

/**
 * An immutable batch of slot rows with its id. Once formed its counters and deltas never change, so a retry after an
 * ambiguous failure writes exactly the same increments, and the id tells whether the first attempt had committed.
 *
 * <p>Ids are unique by construction, whatever the split depth: {@code <source>:<sequence>} for a flush as formed
 * ({@code source} names one coalescer of one process run, the sequence in base 36 never holds a dot), and the halves
 * of a split flush append {@code .0} / {@code .1}, then one more digit per further split ({@code s:1.0}, {@code s:1.01}).
 * A split id always holds a dot and a formed one never does, so the halves of flush {@code 1} cannot be taken for a
 * later flush, and two different split paths are two different strings. Length: a source of at most 17 characters,
 * a sequence of at most 13, and one digit per split level (at most 14 for 10,000 rows) stay within the 64 of the
 * flush-id column.
 */
public record Flush(String id, List<FlushRow> rows) {
  public Flush {
    rows = List.copyOf(rows);
  }

  /** A flush as the coalescer forms it. */
  static Flush formed(String source, long sequence, List<FlushRow> rows) {
    return new Flush(source + ":" + Long.toString(sequence, 36), rows);
  }

  /** The {@code half} (0 or 1) of this flush's rows, under an id no other flush can have. */
  Flush half(int half, List<FlushRow> halfRows) {
    String path = id.indexOf('.') < 0 ? "." : "";
    return new Flush(id + path + half, halfRows);
  }

  /** The same increments under the same id, on other slots: for a retry that should not queue on a stuck row lock. */
  Flush reslotted(UnaryOperator<FlushRow> reslot) {
    return new Flush(id, rows.stream().map(reslot).sorted().toList());
  }
}
