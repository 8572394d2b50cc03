package io.countergateway.store;

import java.util.concurrent.ThreadLocalRandom;

/**
 * The flush-id format, written and read in one place: {@code <source>:<sequence>[.<split path>]}.
 *
 * <p>Ids are unique by construction, whatever the split depth. {@code source} names one coalescer of one process run
 * (the only writer that ever retries its flushes), the sequence is base 36 and never holds a dot, and the halves of a
 * split flush append {@code .0} / {@code .1}, then one more digit per further split ({@code s:1.0}, {@code s:1.01}).
 * A split id always holds a dot and a formed one never does, so the halves of flush {@code 1} cannot be taken for a
 * later flush, and two different split paths are two different strings. Length: a source of at most 17 characters,
 * a sequence of at most 13, and one digit per split level (at most 14 for 10,000 rows) stay within the 64 of the
 * flush-id column.
 */
public final class FlushId {
  private FlushId() {
  }

  /** The id of the {@code sequence}-th flush a source forms. */
  public static String formed(String source, long sequence) {
    return source + ":" + Long.toString(sequence, 36);
  }

  /** The id of the {@code half} (0 or 1) of the flush {@code id}: one more digit on its split path. */
  public static String half(String id, int half) {
    return id + (id.indexOf('.') < 0 ? "." : "") + half;
  }

  /**
   * The same flush under another source: {@code <successor>:<sequence>[.<split path>]}. Used once the source was closed
   * and the flush is proven never committed under it (see {@link FlushFence}); the successor is a fresh source, so
   * the id is unique as the original was.
   */
  public static String withSource(String id, String successor) {
    return successor + id.substring(source(id).length());
  }

  /**
   * A fresh source in place of {@code closed}: a new random part, the same coalescer suffix ({@code -<index>}), so the
   * new one is as short as the coalescer's own (at most 17 characters).
   */
  static String successorOf(String closed) {
    int dash = closed.lastIndexOf('-');
    return Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36)
      + (dash < 0 ? "" : closed.substring(dash));
  }

  /** The part before the last ':' (a whole id without one is its own source, as ids written by hand in tests). */
  public static String source(String id) {
    int colon = id.lastIndexOf(':');
    return colon < 0 ? id : id.substring(0, colon);
  }

  /** The base-36 sequence after the last ':', without the split path; 0 when there is none. */
  public static long sequence(String id) {
    String rest = id.substring(id.lastIndexOf(':') + 1);
    int dot = rest.indexOf('.');
    try {
      return Long.parseLong(dot < 0 ? rest : rest.substring(0, dot), 36);
    } catch (NumberFormatException notOurs) {
      return 0;
    }
  }
}
