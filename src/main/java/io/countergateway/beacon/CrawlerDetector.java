package io.countergateway.beacon;

import ua_parser.Parser;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Recognises user agents that are not people: crawlers by ua-parser's device rules (its {@code Spider} family,
 * kept up to date with uap-core's regexes.yaml), headless and automated browsers, and the patterns of
 * {@code beacon.botPatterns}. Thread-safe and slow (about a millisecond per user agent, hundreds of regular
 * expressions): build it once, off the event loop, and keep its answers in a {@link UserAgentVerdicts} cache.
 */
public final class CrawlerDetector {
  /** Automation that announces itself in the User-Agent; ua-parser names these browsers, it does not call them bots. */
  private static final Pattern HEADLESS = Pattern.compile(
    "HeadlessChrome|PhantomJS|SlimerJS|Puppeteer|Playwright|Selenium|WebDriver|Chrome-Lighthouse|Electron/.* Headless",
    Pattern.CASE_INSENSITIVE);

  private final List<Pattern> extraPatterns;

  /** Cheap: ua-parser's rules are loaded (about a second) on the first {@link #classify}, shared by the JVM. */
  public CrawlerDetector(List<Pattern> extraPatterns) {
    this.extraPatterns = List.copyOf(extraPatterns);
  }

  /** Loaded by the class loader on first use, once, and thread-safely. */
  private static final class Rules {
    static final Parser PARSER = new Parser();
  }

  /** Why this user agent is not counted, or null for a person's browser. */
  public DropReason classify(String userAgent) {
    if (userAgent == null || userAgent.isBlank()) {
      return DropReason.NO_USER_AGENT;
    }
    for (Pattern pattern : extraPatterns) {
      if (pattern.matcher(userAgent).find()) {
        return DropReason.CONFIGURED_PATTERN;
      }
    }
    if (HEADLESS.matcher(userAgent).find()) {
      return DropReason.HEADLESS_BROWSER;
    }
    return "Spider".equals(Rules.PARSER.parseDevice(userAgent).family) ? DropReason.CRAWLER : null;
  }
}
