package io.countergateway.internal.uniques;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Visitor hash")
class VisitorHashTest {
  private static final byte[] SALT = "a salt of thirty-two bytes, ok!!".getBytes(StandardCharsets.UTF_8);

  /** What a visitor is, as src/DESIGN.md states it: the first 8 bytes of HMAC-SHA256(salt, address \0 agent \0 type). */
  private static long reference(String address, String userAgent, String type) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SALT, "HmacSHA256"));
    byte[] digest = mac.doFinal((address + '\0' + (userAgent == null ? "" : userAgent) + '\0' + type)
      .getBytes(StandardCharsets.UTF_8));
    return ByteBuffer.wrap(digest).getLong();
  }

  @Test
  @DisplayName("a beacon hashed once for its page and once for its site gives each sketch the value a whole-string hash gives, so visitor counts stay what they were")
  void sameValuesAsTheWholeStringHash() throws Exception {
    VisitorHash hash = new VisitorHash(SALT);
    String[][] visitors = {
      {"203.0.113.7", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"},
      {"2001:db8::1", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1 Ünïcödé 漢字"},
      {"198.51.100.2", null},
      {"198.51.100.2", ""},
    };
    List<Long> seen = new ArrayList<>();
    for (String[] visitor : visitors) {
      byte[] bytes = VisitorHash.visitor(visitor[0], visitor[1]);
      for (String type : List.of("pageviews", "pageviews~site", "pageviews")) {
        long value = hash.of(bytes, type);
        assertThat(value).as("%s / %s in %s", visitor[0], visitor[1], type)
          .isEqualTo(reference(visitor[0], visitor[1], type));
        seen.add(value);
      }
    }
    // a visitor's page and site values differ; no agent and an empty one are one visitor, every other pair two
    assertThat(seen.get(0)).isNotEqualTo(seen.get(1));
    assertThat(seen.subList(6, 9)).isEqualTo(seen.subList(9, 12));
    assertThat(seen.stream().distinct().count()).isEqualTo(2L * (visitors.length - 1));
  }

  @Test
  @DisplayName("another day's salt gives the same visitor another value: a visitor is told apart within a day only")
  void anotherSaltAnotherValue() {
    byte[] visitor = VisitorHash.visitor("203.0.113.7", "Mozilla/5.0");
    byte[] otherSalt = SALT.clone();
    otherSalt[0] ^= 1;
    assertThat(new VisitorHash(otherSalt).of(visitor, "pageviews")).isNotEqualTo(new VisitorHash(SALT).of(visitor, "pageviews"));
  }
}
