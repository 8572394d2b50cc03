package io.countergateway.internal.model;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Page ids")
class PageIdsTest {
  private static final int STORED = 255;

  @ParameterizedTest
  @ValueSource(strings = {"/", "/docs/über", "/a page", "/wiki/Foo_(bar)", "/x;y", "/it's", "/100%", "/a+b", "/#",
    "/日本語/ページ", "/😀", "(other)", "(invalid)", "/\u200Bzero-width", "/tab\u00A0nbsp"})
  @DisplayName("a path of any script and punctuation is its own id, as written")
  void pathsAreTheirOwnIds(String path) {
    assertThat(PageIds.of(path, STORED)).isEqualTo(path);
  }

  @Test
  @DisplayName("one page written in two Unicode forms is one id: its NFC form")
  void normalisedToNfc() {
    assertThat(PageIds.of("/docs/u\u0308ber", STORED)).isEqualTo("/docs/\u00FCber");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "/a\u0000b", "/a\nb", "/a\rb", "/a\tb", "/a\u007Fb", "/a\u0085b", "/half\uD83D", "/\uDE00half"})
  @DisplayName("no text, control characters and half a surrogate pair cannot be an id")
  void refused(String path) {
    assertThat(PageIds.of(path, STORED)).isNull();
  }

  @Test
  @DisplayName("malformed text (null) and paths past 8,192 characters cannot be ids; 8,192 can")
  void bounds() {
    assertThat(PageIds.of(null, STORED)).isNull();
    assertThat(PageIds.of("/" + "a".repeat(PageIds.MAX_CHARS), STORED)).isNull();
    assertThat(PageIds.of("/" + "a".repeat(PageIds.MAX_CHARS - 1), STORED)).hasSize(STORED);
  }

  @Test
  @DisplayName("a path longer than the column is shortened to it: the same path to the same id, two paths to two ids")
  void longPathsShortenedDeterministically() {
    String prefix = "/" + "p".repeat(300);
    String id = PageIds.of(prefix + "/one", STORED);
    assertThat(id).hasSize(STORED).startsWith("/" + "p".repeat(STORED - PageIds.HASH_DIGITS - 2))
      .matches(".*\u2026[0-9a-f]{16}");
    assertThat(PageIds.of(prefix + "/one", STORED)).isEqualTo(id);
    assertThat(PageIds.of(prefix + "/two", STORED)).isNotEqualTo(id).hasSize(STORED);
    assertThat(PageIds.of("/" + "q".repeat(254), STORED)).hasSize(255).doesNotContain("\u2026");
    // 1,024 UTF-8 bytes and more: still one distinct id per path
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < 1_000; i++) {
      String path = "/" + "ü".repeat(600) + "/" + i;
      assertThat(path.getBytes(StandardCharsets.UTF_8).length).isGreaterThan(1_024);
      ids.add(PageIds.of(path, STORED));
    }
    assertThat(ids).hasSize(1_000).allSatisfy(shortened -> assertThat(shortened).hasSizeLessThanOrEqualTo(STORED));
  }

  @Test
  @DisplayName("shortening never splits a surrogate pair, and fits a namespace's narrower column")
  void shorteningKeepsCodePointsWhole() {
    String id = PageIds.of("/" + "😀".repeat(200), STORED);
    assertThat(id).hasSizeLessThanOrEqualTo(STORED);
    assertThat(id.codePoints().filter(c -> c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE).count())
      .as("half a pair").isZero();
    assertThat(PageIds.of("/" + "x".repeat(100), 40)).hasSize(40).contains("\u2026");
    assertThat(PageIds.of("/" + "x".repeat(100), 10)).hasSize(10).matches("[0-9a-f]{10}");
  }
}
