package io.countergateway.internal.beacon;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

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
}
