package io.countergateway.internal.http;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Percent-decoding a beacon's id")
class PathSegmentsTest {
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "%2Fdocs%2F%C3%BCber|/docs/über",
    "%2Fa%20page|/a page",
    "%2Fwiki%2FFoo_(bar)|/wiki/Foo_(bar)",
    "%2Fx%3By|/x;y",
    "%2Fit's|/it's",
    "%2F100%25|/100%",
    "%2F100%|/100%",
    "50%%off|50%%off",
    "%zz%2|%zz%2",
    "%2F%F0%9F%98%80|/😀",
    "a+b|a+b",
    "%252F|%2F",
    "plain|plain",
    "%e2%82%ac|€"})
  @DisplayName("each %XX is a byte of UTF-8, decoded once; a % without two hex digits is a %; + stays +")
  void decodedOnce(String raw, String text) {
    assertThat(PathSegments.decode(raw)).isEqualTo(text);
  }

  @Test
  @DisplayName("bytes that are not UTF-8 are no text (the beacon counts under (invalid)); shown names read them as U+FFFD")
  void malformedUtf8() {
    assertThat(PathSegments.decode("%C3%28")).isNull();
    assertThat(PathSegments.decode("%FF")).isNull();
    assertThat(PathSegments.decode("%ED%A0%80")).as("an encoded surrogate").isNull();
    assertThat(PathSegments.decodeLeniently("a%FFb")).isEqualTo("a\uFFFDb");
  }

  @Test
  @DisplayName("a stray % is found and written %25, which any decoder reads back as the same %")
  void strayPercents() {
    assertThat(PathSegments.hasStrayPercent("/v1/beacon/p/%2Fa%20b")).isFalse();
    assertThat(PathSegments.hasStrayPercent("/v1/beacon/p/100%")).isTrue();
    assertThat(PathSegments.hasStrayPercent("%zz")).isTrue();
    assertThat(PathSegments.hasStrayPercent("%2")).isTrue();
    assertThat(PathSegments.escapeStrayPercents("50%%off%2F%")).isEqualTo("50%25%25off%2F%25");
    assertThat(PathSegments.decode(PathSegments.escapeStrayPercents("50%%off%2F%zz"))).isEqualTo(PathSegments.decode("50%%off%2F%zz"));
  }
}
