package io.countergateway.internal.beacon;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class CrawlerDetectorTest {
  final CrawlerDetector detector = new CrawlerDetector(List.of(Pattern.compile("uptime-?checker", Pattern.CASE_INSENSITIVE)));

  @ParameterizedTest
  @ValueSource(strings = {
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    // a phone rule claims the device for "asus" in the made-up tail; ua-parser still names the browser Googlebot
    "Googlebot/2.1 (+http://www.google.com/bot.html) sslvwtdmuzmmcnfgdedetwmpetpcyhovophmzsjigvimxyelmquvwdwswzirusmrbtotioz"
      + "dkimxmtmdktiaxblbwkpemqcffocbfnenpqoequnjdkesbrkipqskyvgnzayyhnbbpwpdtkbverxuzdimiisegbkbiepdjdaybmsvnyhhpzhvxdkxwukhai"
      + "yrasushqbsasoucmtvhzqs",
    // ua-parser takes these for the Mac or the phone they imitate; they name themselves
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
    "Mediapartners-Google"
  })
  @DisplayName("crawlers are recognised by ua-parser's lists, by device or by browser name, or by the name they give")
  void crawlersAreDropped(String userAgent) {
    assertThat(detector.classify(userAgent)).isEqualTo(DropReason.CRAWLER);
  }

  @Test
  @DisplayName("headless browsers, configured patterns and a missing User-Agent are recognised too")
  void otherBots() {
    assertThat(detector.classify("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36"))
      .isEqualTo(DropReason.HEADLESS_BROWSER);
    assertThat(detector.classify("Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1"))
      .isEqualTo(DropReason.HEADLESS_BROWSER);
    assertThat(detector.classify("Mozilla/5.0 (compatible; UptimeChecker/1.0)")).isEqualTo(DropReason.CONFIGURED_PATTERN);
    assertThat(detector.classify("")).isEqualTo(DropReason.NO_USER_AGENT);
    assertThat(detector.classify(null)).isEqualTo(DropReason.NO_USER_AGENT);
  }

  @Test
  @DisplayName("the verdict is ua-parser's own for the corpus and for made-up user agents, or costly_user_agent for one made to need too many rules")
  void verdictIsUaParsers() {
    CrawlerDetector plain = new CrawlerDetector(List.of());
    List<String> agents = new ArrayList<>(UserAgentCorpus.all().stream().map(UserAgentCorpus.Entry::userAgent).toList());
    agents.addAll(UserAgentCorpus.crafted(2_000, 7));
    int costly = 0;
    for (String agent : agents) {
      DropReason verdict = plain.classify(agent);
      if (verdict == DropReason.COSTLY_USER_AGENT) {
        costly++;
        continue;
      }
      if (verdict == DropReason.HEADLESS_BROWSER || verdict == DropReason.CRAWLER && !UserAgentCorpus.uaParserSaysCrawler(agent)) {
        // the headless browsers and the crawlers that name themselves, beyond ua-parser's lists
        continue;
      }
      assertThat(verdict == DropReason.CRAWLER).as(agent).isEqualTo(UserAgentCorpus.uaParserSaysCrawler(agent));
    }
    assertThat(agents.size() - costly).as("user agents held to ua-parser's verdict").isGreaterThan(1_200);
  }

  @Test
  @DisplayName("a rule whose literals are not all in a user agent never matches it: the prefilter hides no match")
  void prefilterHidesNoMatch() {
    List<String> agents = new ArrayList<>(UserAgentCorpus.all().stream().map(UserAgentCorpus.Entry::userAgent).toList());
    agents.addAll(UserAgentCorpus.crafted(500, 11));
    List<CrawlerDetector.Rule> rules = new ArrayList<>(CrawlerDetector.Rules.DEVICES);
    rules.addAll(CrawlerDetector.Rules.BROWSERS);
    int skipped = 0;
    for (String agent : agents) {
      long[] found = CrawlerDetector.Rules.SCANNER.scan(agent);
      for (CrawlerDetector.Rule rule : rules) {
        if (!rule.mayMatch(found)) {
          skipped++;
          assertThat(rule.pattern().matcher(agent).find()).as(rule.pattern() + " on " + agent).isFalse();
        }
      }
    }
    assertThat(skipped).as("rules the scan lets skip").isGreaterThan(agents.size() * rules.size() / 2);
  }

  @Test
  @DisplayName("no browser or crawler of the corpus needs half the budget of rules run")
  void corpusIsFarBelowTheBudget() {
    CrawlerDetector plain = new CrawlerDetector(List.of(), CrawlerDetector.MAX_RULES_RUN / 2);
    for (UserAgentCorpus.Entry entry : UserAgentCorpus.all()) {
      if (entry.kind() != UserAgentCorpus.Kind.CRAFTED) {
        assertThat(plain.classify(entry.userAgent())).as(entry.userAgent()).isNotEqualTo(DropReason.COSTLY_USER_AGENT);
      }
    }
  }
}
