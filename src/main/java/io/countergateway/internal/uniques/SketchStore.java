package io.countergateway.internal.uniques;

import io.countergateway.internal.store.UniqueSketches;
import io.vertx.core.Future;

import java.util.List;
import java.util.function.BinaryOperator;

/** What the visitor sketches ask of the database: a day's salt, and merges (as {@link UniqueSketches} does them). */
interface SketchStore {
  Future<byte[]> salt(long day, byte[] candidate);

  Future<Void> merge(List<UniqueSketches.SketchRow> rows, BinaryOperator<byte[]> union);

  static SketchStore of(UniqueSketches sketches) {
    return new SketchStore() {
      @Override
      public Future<byte[]> salt(long day, byte[] candidate) {
        return sketches.salt(day, candidate);
      }

      @Override
      public Future<Void> merge(List<UniqueSketches.SketchRow> rows, BinaryOperator<byte[]> union) {
        return sketches.merge(rows, union);
      }
    };
  }
}
