package io.countergateway.internal.beacon;

import com.google.common.hash.Hashing;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("SipHash-2-4 of a string's characters")
class SipHashTest {
  @Test
  @DisplayName("equals Guava's sipHash24(k0, k1).hashUnencodedChars for every length 0 to 40, any characters, any key")
  void sameAsGuava() {
    SplittableRandom random = new SplittableRandom(7);
    for (int trial = 0; trial < 2_000; trial++) {
      long k0 = random.nextLong();
      long k1 = random.nextLong();
      StringBuilder text = new StringBuilder();
      int length = trial % 41;
      for (int i = 0; i < length; i++) {
        // ASCII mostly, and any UTF-16 code unit now and then
        text.append((char) (trial % 3 == 0 ? random.nextInt(0x10000) : 32 + random.nextInt(95)));
      }
      assertThat(new SipHash(k0, k1).hash(text)).as("%s under %s, %s", text, k0, k1)
        .isEqualTo(Hashing.sipHash24(k0, k1).hashUnencodedChars(text).asLong());
    }
  }

  @Test
  @DisplayName("the key changes the hash: ids that collide under one key do not under another")
  void keyed() {
    assertThat(new SipHash(1, 2).hash("home")).isNotEqualTo(new SipHash(1, 3).hash("home"));
    assertThat(new SipHash(1, 2).hash("home")).isNotEqualTo(new SipHash(1, 2).hash("homf"));
  }
}
