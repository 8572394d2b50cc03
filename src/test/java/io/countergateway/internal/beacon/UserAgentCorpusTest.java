package io.countergateway.internal.beacon;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The corpus of real user agents (src/test/resources/user-agents/corpus.txt) through the filter a beacon meets. */
class UserAgentCorpusTest {
  final UserAgentVerdicts verdicts = new UserAgentVerdicts(new CrawlerDetector(List.of()), 4 << 20);

  static List<String> browsers() {
    return UserAgentCorpus.of(UserAgentCorpus.Kind.BROWSER);
  }

  static List<String> crawlers() {
    return UserAgentCorpus.of(UserAgentCorpus.Kind.CRAWLER);
  }

  @ParameterizedTest
  @MethodSource("browsers")
  @DisplayName("every real browser of the corpus is counted (Silk, Cubot, Samsung, UC, Opera Mini, in-app browsers)")
  void browsersAreCounted(String userAgent) {
    assertThat(verdicts.classify(userAgent)).isNull();
  }

  @ParameterizedTest
  @MethodSource("crawlers")
  @DisplayName("every real crawler, link previewer and monitor of the corpus is dropped")
  void crawlersAreDropped(String userAgent) {
    assertThat(verdicts.classify(userAgent)).isEqualTo(DropReason.CRAWLER);
  }
}
