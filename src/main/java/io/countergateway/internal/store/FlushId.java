package io.countergateway.internal.store;

/**
 * A flush's id: {@code <source>:<sequence>[.<split path>]} as written in the flush-id table and the journal.
 *
 * <p>Unique by construction, whatever the split depth. {@code source} names one coalescer of one process run (the
 * only writer that ever retries its flushes; minted once, by {@code write/FlushSources}); the sequence is base 36 in
 * text; the halves of a split flush append {@code .0} / {@code .1}, then one more digit per further split
 * ({@code s:1.0}, {@code s:1.01}). A split id always holds a dot and a formed one never does, so the halves of flush
 * {@code 1} cannot be taken for a later flush, and two different split paths are two different strings. Length: a
 * source of at most 17 characters, a sequence of at most 13, and one digit per split level (at most 14 for 10,000
 * rows) stay within the 64 of the flush-id column.
 *
 * @param source    the flush source: no ':' in it
 * @param sequence  the source's count of flushes formed before this one
 * @param splitPath "" for a flush as formed, else one digit (0 or 1) per split
 */
public record FlushId(String source, long sequence, String splitPath) {
  public FlushId {
    if (source.isEmpty() || source.indexOf(':') >= 0) {
      throw new IllegalArgumentException("a flush source is not empty and holds no ':', got '" + source + "'");
    }
    if (sequence < 0 || !splitPath.chars().allMatch(c -> c == '0' || c == '1')) {
      throw new IllegalArgumentException("not a flush id: " + source + ":" + sequence + "." + splitPath);
    }
  }

  /** The {@code sequence}-th flush a source forms. */
  public static FlushId formed(String source, long sequence) {
    return new FlushId(source, sequence, "");
  }

  /** The {@code half} (0 or 1) of this flush: one more digit on its split path. */
  public FlushId half(int half) {
    return new FlushId(source, sequence, splitPath + (half == 0 ? '0' : '1'));
  }

  public boolean isSplit() {
    return !splitPath.isEmpty();
  }

  /** Reads an id as {@link #toString()} writes it. */
  public static FlushId parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("not a flush id: " + text);
    }
    String rest = text.substring(colon + 1);
    int dot = rest.indexOf('.');
    try {
      return new FlushId(text.substring(0, colon), Long.parseLong(dot < 0 ? rest : rest.substring(0, dot), 36),
        dot < 0 ? "" : rest.substring(dot + 1));
    } catch (NumberFormatException notASequence) {
      throw new IllegalArgumentException("not a flush id: " + text, notASequence);
    }
  }

  @Override
  public String toString() {
    String formed = source + ":" + Long.toString(sequence, 36);
    return splitPath.isEmpty() ? formed : formed + "." + splitPath;
  }
}
