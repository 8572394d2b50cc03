package io.countergateway.internal.http;

import io.countergateway.internal.beacon.PageVisit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("A beacon's query")
class BeaconQueryTest {
  @Test
  @DisplayName("cache busters and other tags are ignored and named, in the order sent, each once")
  void ignoredAndNamed() {
    BeaconQuery query = BeaconQuery.of("_=1&cb=2&v=3&utm_source=x&utm_medium=y&fbclid=z&ref=w&cb=9");
    assertThat(query.gif()).isFalse();
    assertThat(query.ignored()).isEqualTo("_,cb,v,fbclid,ref");
  }

  @Test
  @DisplayName("r and the utm_ tags say where the view came from, decoded, the first of each counting")
  void visit() {
    BeaconQuery query = BeaconQuery.of("r=https%3A%2F%2Fnews.example%2F&utm_source=news+letter&utm_medium=email"
      + "&utm_campaign=spring%20sale&utm_source=later&format=gif");
    assertThat(query.visit()).isEqualTo(new PageVisit("https://news.example/", "news letter", "email", "spring sale"));
    assertThat(query.ignored()).isNull();
    assertThat(query.gif()).isTrue();
    assertThat(BeaconQuery.of("utm_campaign=x").visit()).isEqualTo(new PageVisit(null, null, null, "x"));
    assertThat(BeaconQuery.of("_=1").visit()).isSameAs(PageVisit.NONE);
    assertThat(BeaconQuery.of(null).visit()).isSameAs(PageVisit.NONE);
    assertThat(BeaconQuery.of("format=gif").visit()).isSameAs(PageVisit.NONE);
  }

  @Test
  @DisplayName("format=gif asks for the pixel, the first format given decides, and format is never named as ignored")
  void format() {
    assertThat(BeaconQuery.of(null).gif()).isFalse();
    assertThat(BeaconQuery.of(null).ignored()).isNull();
    assertThat(BeaconQuery.of("format=gif").gif()).isTrue();
    assertThat(BeaconQuery.of("format=gif").ignored()).isNull();
    assertThat(BeaconQuery.of("_=1&format=%67if").gif()).isTrue();
    assertThat(BeaconQuery.of("format=png&format=gif").gif()).isFalse();
    assertThat(BeaconQuery.of("format").gif()).isFalse();
  }

  @Test
  @DisplayName("names are shown decoded, anything but visible ASCII as ?, malformed escapes as written; empty ones skipped")
  void shownSafely() {
    assertThat(BeaconQuery.of("utm%5Fsourc=x&%zz=1&a%2Cb&%E2%82%AC=1&r%0A=2&&=x&a+c").ignored())
      .isEqualTo("utm_sourc,%zz,a?b,?,r?,a?c");
  }

  @Test
  @DisplayName("the header stays within 256 characters, each name within 64, and says when names were left out")
  void bounded() {
    StringBuilder many = new StringBuilder("n".repeat(300) + "&" + "p=1&".repeat(3) + "q".repeat(70) + "=1");
    for (int i = 0; i < 40; i++) {
      many.append("&name").append(i).append("=1");
    }
    String header = BeaconQuery.of(many.toString()).ignored();
    assertThat(header).hasSizeLessThanOrEqualTo(BeaconQuery.MAX_HEADER_CHARS).startsWith("n".repeat(64) + ",p,"
      + "q".repeat(64) + ",name0,name1,").endsWith("," + BeaconQuery.MORE);
    assertThat(BeaconQuery.of("x".repeat(64) + "1=1&" + "y".repeat(64) + "=1&" + "z".repeat(64) + "=1&"
      + "w".repeat(61)).ignored()).as("exactly 256 characters").isEqualTo("x".repeat(64) + "," + "y".repeat(64) + ","
      + "z".repeat(64) + "," + "w".repeat(61));
  }
}
