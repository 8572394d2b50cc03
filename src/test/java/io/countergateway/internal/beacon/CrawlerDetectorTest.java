package io.countergateway.internal.beacon;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.regex.Pattern;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(VertxExtension.class)
class CrawlerDetectorTest {
  final CrawlerDetector detector = new CrawlerDetector(List.of(Pattern.compile("uptime-?checker", Pattern.CASE_INSENSITIVE)));
  @ParameterizedTest
  @ValueSource(strings = {
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; U; Android 4.0.3; en-us; KFTT Build/IML74K) AppleWebKit/537.36 (KHTML, like Gecko) Silk/3.68 like Chrome/39.0.2171.93 Safari/537.36"
  })
  @DisplayName("people's browsers are counted")
  void browsersAreCounted(String userAgent) {
    assertThat(detector.classify(userAgent)).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
    "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    // a phone rule claims the device for "asus" in the made-up tail; ua-parser still names the browser Googlebot
    "Googlebot/2.1 (+http://www.google.com/bot.html) sslvwtdmuzmmcnfgdedetwmpetpcyhovophmzsjigvimxyelmquvwdwswzirusmrbtotioz"
      + "dkimxmtmdktiaxblbwkpemqcffocbfnenpqoequnjdkesbrkipqskyvgnzayyhnbbpwpdtkbverxuzdimiisegbkbiepdjdaybmsvnyhhpzhvxdkxwukhai"
      + "yrasushqbsasoucmtvhzqs"
  })
  @DisplayName("crawlers are recognised by ua-parser's list, by device or by browser name")
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
  @DisplayName("a user agent is classified once off the event loop, then answered from the loop's cache")
  void verdictsAreCachedPerLoop(Vertx vertx) {
    Context loop = vertx.getOrCreateContext();
    UserAgentVerdicts verdicts = new UserAgentVerdicts(vertx.createSharedWorkerExecutor("classifier-test", 1), detector, 4 << 20);
    String bot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    DropReason first = await(onLoop(loop, () -> verdicts.classify(bot)));
    assertThat(first).isEqualTo(DropReason.CRAWLER);
    Future<DropReason> second = await(Future.<Future<DropReason>>future(promise ->
      loop.runOnContext(v -> promise.complete(verdicts.classify(bot)))));
    assertThat(second.isComplete()).as("answered at once from the cache").isTrue();
    assertThat(second.result()).isEqualTo(DropReason.CRAWLER);
  }

  @Test
  @DisplayName("the quick check decides as ua-parser's whole device list does, or says it cannot")
  void quickAgreesWithTheWholeList() {
    java.util.Random random = new java.util.Random(7);
    List<String> agents = new java.util.ArrayList<>(List.of(
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
      "Mozilla/5.0 (Linux; Android 9; CUBOT X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36",
      "Mozilla/5.0 (iPhone; CPU iPhone OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.0 Mobile/15E148 Safari/604.1",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
      "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
      "Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
      "curl/8.5.0", "python-requests/2.31", "Java/17.0.2", "Wget/1.21", "facebookexternalhit/1.1",
      "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"));
    for (int i = 0; i < 300; i++) {
      StringBuilder agent = new StringBuilder(i % 2 == 0 ? "Googlebot/2.1 " : "Mozilla/5.0 (Linux; Android 10) ");
      for (int c = 0; c < 20 + random.nextInt(400); c++) {
        agent.append((char) (' ' + random.nextInt(95)));
      }
      agents.add(agent.toString());
    }
    int decided = 0;
    for (String agent : agents) {
      Object quick = detector.quick(agent);
      if (quick == null || quick == DropReason.CRAWLER) {
        decided++;
        assertThat(detector.full(agent)).as(agent).isEqualTo(quick);
      }
    }
    assertThat(decided).as("most user agents are decided by the quick check").isGreaterThan(agents.size() / 3);
  }

  @Test
  @DisplayName("a user agent longer than 512 characters is a bot, decided without matching")
  void longUserAgentsAreBots(Vertx vertx) {
    Context loop = vertx.getOrCreateContext();
    UserAgentVerdicts verdicts = new UserAgentVerdicts(vertx.createSharedWorkerExecutor("classifier-test", 1), detector, 4 << 20);
    String browserLike = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0 " + "x".repeat(600);
    assertThat(await(onLoop(loop, () -> verdicts.classify(browserLike)))).isEqualTo(DropReason.LONG_USER_AGENT);
    assertThat(verdicts.cached()).as("long user agents are not cached").isZero();
  }

  @Test
  @DisplayName("when the classifier is saturated, undecided user agents are dropped as filter_busy, never counted")
  void saturatedFilterFailsClosed(Vertx vertx) {
    Context loop = vertx.getOrCreateContext();
    io.vertx.core.WorkerExecutor blocked = vertx.createSharedWorkerExecutor("classifier-blocked", 1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    blocked.executeBlocking(() -> release.await(10, java.util.concurrent.TimeUnit.SECONDS));
    UserAgentVerdicts verdicts = new UserAgentVerdicts(blocked, detector, 4 << 20);
    List<Future<DropReason>> answers = await(EventLoopCall.on(loop, () -> {
      List<Future<DropReason>> all = new java.util.ArrayList<>();
      for (int i = 0; i < 100; i++) {
        all.add(verdicts.classify("Googlebot/2.1 made-up-" + i));
      }
      return Future.succeededFuture(all);
    }));
    long busy = answers.stream().filter(f -> f.isComplete() && f.result() == DropReason.FILTER_BUSY).count();
    assertThat(busy).isEqualTo(100 - UserAgentVerdicts.MAX_IN_FLIGHT);
    release.countDown();
    for (Future<DropReason> answer : answers) {
      assertThat(await(answer)).as("never counted unclassified").isNotNull();
    }
    blocked.close();
  }

  /** Runs {@code action} on {@code loop} and hands back what it returns. */
  static final class EventLoopCall {
    static <T> Future<T> on(Context loop, java.util.function.Supplier<Future<T>> action) {
      return onLoop(loop, action);
    }
  }

  static <T> Future<T> onLoop(Context loop, java.util.function.Supplier<Future<T>> action) {
    return Future.future(promise -> loop.runOnContext(v -> action.get().onComplete(promise)));
  }
}
