package io.countergateway.internal.beacon;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class LiteralScannerTest {
  final LiteralScanner scanner = new LiteralScanner(List.of("bot", "cubot", "silk", "ot/", "android"));

  boolean found(String text, String literal) {
    long[] found = scanner.scan(text);
    int id = scanner.ids().get(literal);
    return (found[id >>> 6] & 1L << id) != 0;
  }

  @Test
  @DisplayName("the scan finds every literal, overlapping ones and ones inside others too, in any case")
  void findsOverlappingLiterals() {
    String agent = "Mozilla/5.0 (Linux; ANDROID 9; CUBOT/1) Silk";
    assertThat(found(agent, "cubot")).isTrue();
    assertThat(found(agent, "bot")).isTrue();
    assertThat(found(agent, "ot/")).isTrue();
    assertThat(found(agent, "android")).isTrue();
    assertThat(found(agent, "silk")).isTrue();
    assertThat(found("Mozilla/5.0 (Windows NT 10.0)", "bot")).isFalse();
  }

  @Test
  @DisplayName("a character no literal holds, non-ASCII ones among them, breaks a literal")
  void otherCharactersBreakLiterals() {
    assertThat(found("sil\u00e9k bo t", "silk")).isFalse();
    assertThat(found("sil\u00e9k bo t", "bot")).isFalse();
    assertThat(found("\u00e9silk\u00e9", "silk")).isTrue();
  }

  @Test
  @DisplayName("the literals a pattern requires: a literal run, and/or across groups and alternatives, nothing for what is optional")
  void requiredLiterals() {
    assertThat(literals("; *CUBOT ([^;/]+) Build")).containsExactly("cubot ", " build");
    assertThat(literals("(?:iPhone|Android).{0,300}(?:bots?/\\d|YRSpider)")).containsExactly("iphone", "android", "bot", "yrspider");
    assertThat(literals("[Bb]ot\\b")).containsExactly("bot");
    assertThat(literals("Silk-?Accelerated")).containsExactly("silk", "accelerated");
    assertThat(literals("(?:Kindle)?Fire")).containsExactly("fire");
    assertThat(RequiredLiterals.of(Pattern.compile("foo|ba"))).as("an alternative with no literal").isEqualTo(RequiredLiterals.Need.ANY);
    assertThat(RequiredLiterals.of(Pattern.compile("\\x41bcd"))).as("syntax it does not read").isEqualTo(RequiredLiterals.Need.ANY);
    assertThat(RequiredLiterals.of(Pattern.compile("silk", Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)))
      .as("Unicode case folding").isEqualTo(RequiredLiterals.Need.ANY);
  }

  static List<String> literals(String regex) {
    List<String> literals = new java.util.ArrayList<>();
    RequiredLiterals.of(Pattern.compile(regex)).literals(literals);
    return literals;
  }
}
