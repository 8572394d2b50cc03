package io.countergateway.internal.beacon;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What text a regular expression's match must contain: a {@link Need} built of literals (ASCII lower-cased, at least
 * {@link #MIN_LENGTH} characters) joined by "and" and "or", or {@link Need#ANY} when nothing is known. The rule that
 * makes it safe as a prefilter: a Need is never stronger than the pattern; if {@code pattern.matcher(s).find()}, then
 * {@code need.holds(lower-cased s)}. Every construct read conservatively gives up towards ANY: a repeated or
 * optional atom ends a literal, a lookaround, a back-reference or a class of several letters requires nothing, and any
 * syntax not read here (escapes such as {@code \x41}, comments mode, Unicode case folding) makes the whole pattern ANY.
 * Case is ignored on both sides (ASCII only, as {@code CASE_INSENSITIVE} without {@code UNICODE_CASE} folds), so a
 * case-sensitive literal is found in more texts than it matches, never in fewer.
 */
final class RequiredLiterals {
  /** Shorter literals are in nearly every user agent: a need of them filters nothing and costs the scan outputs. */
  static final int MIN_LENGTH = 3;
  private static final int ALLOWED_FLAGS = Pattern.CASE_INSENSITIVE;

  private final String regex;
  private int at;

  private RequiredLiterals(String regex) {
    this.regex = regex;
  }

  /** What every match of {@code pattern} contains. */
  static Need of(Pattern pattern) {
    if ((pattern.flags() & ~ALLOWED_FLAGS) != 0) {
      return Need.ANY;
    }
    RequiredLiterals parser = new RequiredLiterals(pattern.pattern());
    try {
      Need need = parser.alternation();
      return parser.at == parser.regex.length() ? need : Need.ANY;
    } catch (RuntimeException e) {
      // Unreadable, or syntax read past its end: nothing is known
      return Need.ANY;
    }
  }

  /** Syntax this reader does not follow: the pattern requires nothing it can name. */
  private static final class Unreadable extends RuntimeException {
    Unreadable() {
      super(null, null, false, false);
    }
  }

  private Need alternation() {
    List<Need> branches = new ArrayList<>();
    branches.add(sequence());
    while (at < regex.length() && regex.charAt(at) == '|') {
      at++;
      branches.add(sequence());
    }
    return Need.or(branches);
  }

  private Need sequence() {
    List<Need> all = new ArrayList<>();
    StringBuilder run = new StringBuilder();
    while (at < regex.length() && regex.charAt(at) != '|' && regex.charAt(at) != ')') {
      char c = regex.charAt(at);
      int literal = -1;
      Need group = null;
      switch (c) {
        case '(' -> group = group();
        case '[' -> literal = charClass();
        case '.', '^', '$' -> at++;
        case '\\' -> literal = escape();
        case '*', '+', '?', '{' -> throw new Unreadable();
        default -> {
          at++;
          literal = c < 128 ? c : -1;
        }
      }
      int min = quantifier();
      if (literal >= 0 && min >= 1) {
        run.append(Character.toLowerCase((char) literal));
      }
      if (literal < 0 || min != 1) {
        flush(run, all);
      }
      if (group != null && min >= 1) {
        all.add(group);
      }
    }
    flush(run, all);
    return Need.and(all);
  }

  private static void flush(StringBuilder run, List<Need> all) {
    if (run.length() >= MIN_LENGTH) {
      all.add(Need.literal(run.toString().toLowerCase(Locale.ROOT)));
    }
    run.setLength(0);
  }

  /** A group's need, or null for one that requires nothing (a lookaround, a flag switch). */
  private Need group() {
    at++;
    boolean requires = true;
    if (regex.charAt(at) == '?') {
      at++;
      char kind = regex.charAt(at);
      if (kind == ':' || kind == '>') {
        at++;
      } else if (kind == '=' || kind == '!') {
        at++;
        requires = false;
      } else if (kind == '<') {
        at++;
        char next = regex.charAt(at);
        if (next == '=' || next == '!') {
          at++;
          requires = false;
        } else {
          while (regex.charAt(at) != '>') {
            at++;
          }
          at++;
        }
      } else {
        // inline flags: only i and -i keep the literals' meaning
        while (regex.charAt(at) == 'i' || regex.charAt(at) == '-') {
          at++;
        }
        if (regex.charAt(at) == ')') {
          at++;
          return null;
        }
        if (regex.charAt(at) != ':') {
          throw new Unreadable();
        }
        at++;
      }
    }
    Need inner = alternation();
    if (regex.charAt(at) != ')') {
      throw new Unreadable();
    }
    at++;
    return requires ? inner : Need.ANY;
  }

  /** A class's one letter when it names a single letter in any case ({@code [Bb]}), else -1. */
  private int charClass() {
    int start = ++at;
    if (regex.charAt(at) == '^') {
      at++;
    }
    if (regex.charAt(at) == ']') {
      at++;
    }
    int depth = 1;
    while (depth > 0) {
      char c = regex.charAt(at++);
      if (c == '\\') {
        at++;
      } else if (c == '[') {
        depth++;
      } else if (c == ']') {
        depth--;
      }
    }
    String body = regex.substring(start, at - 1);
    if (body.isEmpty() || body.length() > 2) {
      return -1;
    }
    char first = body.charAt(0);
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (c >= 128 || !Character.isLetter(c) || Character.toLowerCase(c) != Character.toLowerCase(first)) {
        return -1;
      }
    }
    return Character.toLowerCase(first);
  }

  /** The escaped character when it stands for itself, else -1 (a class, a boundary, a back-reference). */
  private int escape() {
    at++;
    char c = regex.charAt(at++);
    if (c == 'Q') {
      int end = regex.indexOf("\\E", at);
      if (end < 0) {
        throw new Unreadable();
      }
      // a quoted run: its characters are a literal, but a quantifier after \E applies to its last one only; read
      // it as one atom that requires nothing, which is always safe
      at = end + 2;
      return -1;
    }
    if (c < 128 && !Character.isLetterOrDigit(c)) {
      return c;
    }
    switch (c) {
      case 'd', 'D', 'w', 'W', 's', 'S', 'h', 'H', 'v', 'V', 'R', 'X', 'b', 'B', 'A', 'G', 'Z', 'z' -> {
        return -1;
      }
      case 'p', 'P' -> {
        if (regex.charAt(at) == '{') {
          at = regex.indexOf('}', at) + 1;
          if (at == 0) {
            throw new Unreadable();
          }
        } else {
          at++;
        }
        return -1;
      }
      default -> {
        if (c >= '1' && c <= '9') {
          while (at < regex.length() && Character.isDigit(regex.charAt(at))) {
            at++;
          }
          return -1;
        }
        throw new Unreadable();
      }
    }
  }

  /** Consumes a quantifier after an atom: the atom's least count (1 when there is none). */
  private int quantifier() {
    if (at >= regex.length()) {
      return 1;
    }
    char c = regex.charAt(at);
    int min;
    if (c == '?' || c == '*') {
      at++;
      min = 0;
    } else if (c == '+') {
      at++;
      min = 2;
    } else if (c == '{') {
      int end = regex.indexOf('}', at);
      String[] bounds = regex.substring(at + 1, end).split(",", -1);
      min = Integer.parseInt(bounds[0].trim());
      at = end + 1;
      // {1} and {1,1} are the atom once; any other count repeats it, which ends a literal after one copy
      boolean once = min == 1 && (bounds.length == 1 || "1".equals(bounds[1].trim()));
      min = min == 0 ? 0 : once ? 1 : 2;
    } else {
      return 1;
    }
    if (at < regex.length() && (regex.charAt(at) == '?' || regex.charAt(at) == '+')) {
      at++;
    }
    return min;
  }

  /** A condition on a lower-cased text: literals it contains, joined by and/or; {@link #ANY} holds for every text. */
  sealed interface Need {
    Need ANY = new Join(true, List.of());

    /** Whether the need holds for a text whose literals found are the set bits of {@code found}, by id. */
    boolean holds(long[] found);

    /** Every literal named, to build the scanner from. */
    void literals(List<String> into);

    /** This need with each literal's id, its index in {@code ids}. */
    Need withIds(java.util.Map<String, Integer> ids);

    static Need literal(String text) {
      return new Literal(text, -1);
    }

    static Need and(List<Need> needs) {
      List<Need> kept = new ArrayList<>();
      for (Need need : needs) {
        if (need instanceof Join join && join.all()) {
          kept.addAll(join.needs());
        } else {
          kept.add(need);
        }
      }
      return kept.size() == 1 ? kept.get(0) : new Join(true, List.copyOf(kept));
    }

    static Need or(List<Need> needs) {
      List<Need> kept = new ArrayList<>();
      for (Need need : needs) {
        if (ANY.equals(need)) {
          return ANY;
        }
        if (need instanceof Join join && !join.all()) {
          kept.addAll(join.needs());
        } else {
          kept.add(need);
        }
      }
      return kept.size() == 1 ? kept.get(0) : new Join(false, List.copyOf(kept));
    }
  }

  record Literal(String text, int id) implements Need {
    @Override
    public boolean holds(long[] found) {
      return (found[id >>> 6] & 1L << id) != 0;
    }

    @Override
    public void literals(List<String> into) {
      into.add(text);
    }

    @Override
    public Need withIds(java.util.Map<String, Integer> ids) {
      return new Literal(text, ids.get(text));
    }
  }

  /** Every one of {@code needs} when {@code all}, else at least one of them. */
  record Join(boolean all, List<Need> needs) implements Need {
    @Override
    public Need withIds(java.util.Map<String, Integer> ids) {
      return new Join(all, needs.stream().map(need -> need.withIds(ids)).toList());
    }

    @Override
    public boolean holds(long[] found) {
      for (Need need : needs) {
        if (need.holds(found) != all) {
          return !all;
        }
      }
      return all;
    }

    @Override
    public void literals(List<String> into) {
      needs.forEach(need -> need.literals(into));
    }
  }
}
