package io.countergateway.internal.beacon;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class RequiredLiteralsTest {
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
