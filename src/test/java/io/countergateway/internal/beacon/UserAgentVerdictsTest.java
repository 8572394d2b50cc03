package io.countergateway.internal.beacon;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class UserAgentVerdictsTest {
  final UserAgentVerdicts verdicts = new UserAgentVerdicts(new CrawlerDetector(List.of()), 4 << 20);

  @Test
  @DisplayName("a user agent is classified once, then answered from the cache")
  void verdictsAreCached() {
    String bot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    String silk = "Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/121.3.1 like "
      + "Chrome/121.0.6167.164 Safari/537.36";
    assertThat(verdicts.classify(bot)).isEqualTo(DropReason.CRAWLER);
    assertThat(verdicts.classify(silk)).isNull();
    assertThat(verdicts.cached()).isEqualTo(2);
    assertThat(verdicts.classify(bot)).isEqualTo(DropReason.CRAWLER);
    assertThat(verdicts.classify(silk)).isNull();
    assertThat(verdicts.cached()).isEqualTo(2);
  }

  @Test
  @DisplayName("a user agent longer than 512 characters is a bot, decided without matching and never cached")
  void longUserAgentsAreBots() {
    String browserLike = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0 " + "x".repeat(600);
    assertThat(verdicts.classify(browserLike)).isEqualTo(DropReason.LONG_USER_AGENT);
    assertThat(verdicts.cached()).isZero();
  }

  @Test
  @DisplayName("every one of a flood of made-up undecidable user agents gets its verdict at once: none waits, none is dropped for want of time")
  void floodIsDecided() {
    List<String> flood = UserAgentCorpus.crafted(2_000, 3);
    for (String agent : flood) {
      DropReason verdict = verdicts.classify(agent);
      assertThat(verdict).as(agent).isIn(null, DropReason.CRAWLER, DropReason.HEADLESS_BROWSER, DropReason.COSTLY_USER_AGENT);
    }
    String silk = "Mozilla/5.0 (Linux; Android 11; KFRASWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/130.4.1 like "
      + "Chrome/130.0.6723.102 Safari/537.36";
    assertThat(verdicts.classify(silk)).as("a real Silk browser amid the flood").isNull();
  }
}
