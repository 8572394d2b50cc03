package io.countergateway.internal.store;

import java.util.List;
import java.util.function.UnaryOperator;

/**
 * An immutable batch of slot rows with its id. Once formed its counters and deltas never change, so a retry after an
 * ambiguous failure writes exactly the same increments, and the id tells whether the first attempt had committed.
 */
public record Flush(FlushId id, List<FlushRow> rows) {
  public Flush {
    rows = List.copyOf(rows);
  }

  /** The {@code half} (0 or 1) of this flush's rows, under an id no other flush can have. */
  public Flush half(int half, List<FlushRow> halfRows) {
    return new Flush(id.half(half), halfRows);
  }

  /** The same rows under another id: a flush proven never committed under its own, going on under a live source. */
  public Flush under(FlushId newId) {
    return new Flush(newId, rows);
  }

  /** The same increments under the same id, on other slots: for a retry that should not queue on a stuck row lock. */
  public Flush reslotted(UnaryOperator<FlushRow> reslot) {
    return new Flush(id, rows.stream().map(reslot).sorted().toList());
  }
}
