package io.countergateway.batch;

import java.util.List;

/**
 * An immutable batch of slot rows with its id. Once formed it never changes, so a retry after an ambiguous
 * failure writes exactly the same rows, and the id tells whether the first attempt had committed.
 */
public record Flush(String id, List<FlushRow> rows) {
  public Flush {
    rows = List.copyOf(rows);
  }
}
