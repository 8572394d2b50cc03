package io.countergateway.internal.beacon;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds which of a fixed set of ASCII literals occur in a text, in one pass whatever their number (Aho-Corasick,
 * compiled to a table: one array read per character). ASCII letters are compared lower-cased; a character no literal
 * holds (any non-ASCII one among them) restarts the match. Built once, immutable, thread-safe.
 */
final class LiteralScanner {
  private final Map<String, Integer> ids;
  /** The column of each ASCII character in {@link #next}; 0 for a character no literal holds. */
  private final byte[] column = new byte[128];
  private final int columns;
  /**
   * {@code next[state * columns + column]}: the state after reading a character, failure links folded in; a char per
   * entry, half an int table's cache lines (ua-parser's literals make ~8,600 states of the 65,536 a char holds).
   */
  private final char[] next;
  /** The literals that end at each state (its own and its suffixes'), by id; null for none. */
  private final int[][] ends;

  /** {@code literals}: lower-case ASCII, any order, repeats allowed; a literal's id is its index in {@link #ids()}. */
  LiteralScanner(List<String> literals) {
    Map<String, Integer> byText = new HashMap<>();
    for (String literal : literals) {
      byText.putIfAbsent(literal, byText.size());
    }
    this.ids = Map.copyOf(byText);
    int used = 1;
    for (String literal : byText.keySet()) {
      for (char c : literal.toCharArray()) {
        if (c >= 128 || Character.isUpperCase(c)) {
          throw new IllegalArgumentException("not a lower-case ASCII literal: " + literal);
        }
        if (column[c] == 0) {
          column[c] = (byte) used++;
        }
      }
    }
    for (char c = 'A'; c <= 'Z'; c++) {
      column[c] = column[Character.toLowerCase(c)];
    }
    this.columns = used;
    // the trie
    List<int[]> trie = new ArrayList<>();
    List<List<Integer>> ending = new ArrayList<>();
    trie.add(new int[columns]);
    ending.add(new ArrayList<>());
    for (Map.Entry<String, Integer> literal : byText.entrySet()) {
      int state = 0;
      for (char c : literal.getKey().toCharArray()) {
        int col = column[c];
        if (trie.get(state)[col] == 0) {
          trie.get(state)[col] = trie.size();
          trie.add(new int[columns]);
          ending.add(new ArrayList<>());
        }
        state = trie.get(state)[col];
      }
      ending.get(state).add(literal.getValue());
    }
    // failure links, breadth first, folded into the table so that a scan never follows one
    int states = trie.size();
    if (states > Character.MAX_VALUE) {
      throw new IllegalArgumentException(states + " states: more than a char table holds");
    }
    int[] fail = new int[states];
    this.next = new char[states * columns];
    ArrayDeque<Integer> queue = new ArrayDeque<>();
    for (int col = 1; col < columns; col++) {
      int child = trie.get(0)[col];
      next[col] = (char) child;
      if (child != 0) {
        queue.add(child);
      }
    }
    while (!queue.isEmpty()) {
      int state = queue.poll();
      ending.get(state).addAll(ending.get(fail[state]));
      for (int col = 1; col < columns; col++) {
        int child = trie.get(state)[col];
        if (child != 0) {
          fail[child] = next[fail[state] * columns + col];
          next[state * columns + col] = (char) child;
          queue.add(child);
        } else {
          next[state * columns + col] = next[fail[state] * columns + col];
        }
      }
    }
    this.ends = new int[states][];
    for (int state = 0; state < states; state++) {
      List<Integer> found = ending.get(state);
      ends[state] = found.isEmpty() ? null : found.stream().distinct().mapToInt(Integer::intValue).toArray();
    }
  }

  /** Each literal's id: its bit in what {@link #scan} answers. */
  Map<String, Integer> ids() {
    return ids;
  }

  /** The literals found in {@code text}: bit {@code id} of the answer is set when literal {@code id} occurs. */
  long[] scan(String text) {
    long[] found = new long[(ids.size() + 63) >>> 6];
    int state = 0;
    for (int i = 0, n = text.length(); i < n; i++) {
      char c = text.charAt(i);
      state = next[state * columns + (c < 128 ? column[c] : 0)];
      int[] here = ends[state];
      if (here != null) {
        for (int id : here) {
          found[id >>> 6] |= 1L << id;
        }
      }
    }
    return found;
  }

  /** The table's size in states (for tests and the benchmark's report). */
  int states() {
    return ends.length;
  }

  @Override
  public String toString() {
    return "LiteralScanner[" + ids.size() + " literals, " + states() + " states, " + columns + " columns]";
  }
}
