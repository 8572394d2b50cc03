package io.countergateway.internal.beacon;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import ua_parser.Parser;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Recognises user agents that are not people: crawlers by ua-parser's device rules (its {@code Spider} family,
 * kept up to date with uap-core's regexes.yaml), headless and automated browsers, and the patterns of
 * {@code beacon.botPatterns}. Thread-safe.
 *
 * <p>Cheap in nearly every case ({@link #quick}): ua-parser calls a user agent a Spider when the first of its ~630
 * device rules that matches is a Spider rule. The Spider rules are few (7 in uap-core 0.18): a user agent none of them
 * matches is no Spider, whatever the other rules say, and one the Spider rules at the head of the list match is one.
 * Only a user agent that matches a Spider rule further down (the generic {@code bot|crawl|…} rule) needs the whole
 * list, since an earlier device rule may claim it (a {@code CUBOT} phone): that is {@link #full}, about a millisecond,
 * for a bounded executor, which also asks ua-parser's browser name.
 */
public final class CrawlerDetector {
  /** Automation that announces itself in the User-Agent; ua-parser names these browsers, it does not call them bots. */
  private static final Pattern HEADLESS = Pattern.compile(
    "HeadlessChrome|PhantomJS|SlimerJS|Puppeteer|Playwright|Selenium|WebDriver|Chrome-Lighthouse|Electron/.* Headless",
    Pattern.CASE_INSENSITIVE);

  /** ua-parser's browser names for crawlers: Googlebot, bingbot, Twitterbot, MSIECrawler, Spider, and the like. */
  private static final Pattern CRAWLER_FAMILY = Pattern.compile("bot\\b|spider|crawler", Pattern.CASE_INSENSITIVE);

  private final List<Pattern> extraPatterns;

  /** Cheap: the rules are loaded on the first classification, once per JVM. */
  public CrawlerDetector(List<Pattern> extraPatterns) {
    this.extraPatterns = List.copyOf(extraPatterns);
  }

  /** What {@link #quick} could not decide: the whole device list is needed. */
  public static final Object UNDECIDED = new Object();

  /** Loaded by the class loader on first use, once, and thread-safely. */
  private static final class Rules {
    static final Parser PARSER = new Parser();
    /** The Spider rules before the first other device rule: a match is a Spider. */
    static final List<Pattern> LEADING_SPIDERS = new ArrayList<>();
    /** The Spider rules after other device rules: a match needs the whole list. */
    static final List<Pattern> LATER_SPIDERS = new ArrayList<>();

    static {
      try (InputStream yaml = Parser.class.getResourceAsStream("/ua_parser/regexes.yaml")) {
        if (yaml == null) {
          throw new IllegalStateException("ua-parser's regexes.yaml is missing from the classpath");
        }
        Map<String, Object> rules = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        @SuppressWarnings("unchecked")
        List<Map<String, String>> devices = (List<Map<String, String>>) rules.get("device_parsers");
        boolean leading = true;
        for (Map<String, String> rule : devices) {
          boolean spider = "Spider".equals(rule.get("device_replacement"));
          if (!spider) {
            leading = false;
            continue;
          }
          // uap-java compiles each rule with its regex_flag ("i": case-insensitive) and finds it anywhere
          Pattern pattern = Pattern.compile(rule.get("regex"), "i".equals(rule.get("regex_flag")) ? Pattern.CASE_INSENSITIVE : 0);
          (leading ? LEADING_SPIDERS : LATER_SPIDERS).add(pattern);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * Why this user agent is not counted, null for a person's browser, or {@link #UNDECIDED} when only {@link #full}
   * can tell. Microseconds: a handful of regular expressions.
   */
  public Object quick(String userAgent) {
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
    for (Pattern pattern : Rules.LEADING_SPIDERS) {
      if (pattern.matcher(userAgent).find()) {
        return DropReason.CRAWLER;
      }
    }
    for (Pattern pattern : Rules.LATER_SPIDERS) {
      if (pattern.matcher(userAgent).find()) {
        return UNDECIDED;
      }
    }
    return null;
  }

  /**
   * The whole device list, as ua-parser decides, then its browser name: about a millisecond. A device rule may claim
   * a crawler's user agent for a phone from a brand name anywhere in it ("asus" inside made-up text after
   * {@code Googlebot/2.1}); ua-parser still names the browser {@code Googlebot}, and a browser named a bot is one.
   */
  public DropReason full(String userAgent) {
    if ("Spider".equals(Rules.PARSER.parseDevice(userAgent).family)) {
      return DropReason.CRAWLER;
    }
    return CRAWLER_FAMILY.matcher(Rules.PARSER.parseUserAgent(userAgent).family).find() ? DropReason.CRAWLER : null;
  }

  /** Why this user agent is not counted, or null for a person's browser: {@link #quick}, then {@link #full} if needed. */
  public DropReason classify(String userAgent) {
    Object quick = quick(userAgent);
    return quick == UNDECIDED ? full(userAgent) : (DropReason) quick;
  }
}
