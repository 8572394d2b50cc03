package io.countergateway.internal.model;

import java.util.regex.Pattern;

/**
 * {@code limits.idPattern} as a test of ids. A pattern that is one character class repeated ({@code [...]+}, as the
 * default is) is answered from a table of the ASCII characters the class takes, each decided once by the class
 * itself at start; ids with other characters, and every other pattern, go to the regex. The answers are the regex's:
 * the table only remembers them. Why: the regex's per-character predicates were a tenth of a batch's cost.
 */
final class IdCharacters {
  /** One class, without nested classes: escapes allowed, no bare '[' or ']' inside. */
  private static final Pattern ONE_CLASS_REPEATED = Pattern.compile("\\[(?:[^\\\\\\[\\]]|\\\\.)+\\]\\+");

  private final Pattern pattern;
  private final boolean[] ascii;

  private IdCharacters(Pattern pattern, boolean[] ascii) {
    this.pattern = pattern;
    this.ascii = ascii;
  }

  static IdCharacters of(Pattern pattern) {
    String regex = pattern.pattern();
    if (pattern.flags() != 0 || !ONE_CLASS_REPEATED.matcher(regex).matches()) {
      return new IdCharacters(pattern, null);
    }
    Pattern oneCharacter = Pattern.compile(regex.substring(0, regex.length() - 1));
    boolean[] ascii = new boolean[128];
    for (char c = 0; c < ascii.length; c++) {
      ascii[c] = oneCharacter.matcher(String.valueOf(c)).matches();
    }
    return new IdCharacters(pattern, ascii);
  }

  boolean matches(String id) {
    if (ascii == null) {
      return pattern.matcher(id).matches();
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c >= ascii.length) {
        return pattern.matcher(id).matches();
      }
      if (!ascii[c]) {
        return false;
      }
    }
    return !id.isEmpty();
  }
}
