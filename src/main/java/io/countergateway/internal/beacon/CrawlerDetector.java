package io.countergateway.internal.beacon;

import io.countergateway.internal.beacon.RequiredLiterals.Need;
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
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Recognises user agents that are not people, at line rate on the event loop: crawlers as ua-parser decides them
 * (uap-core's regexes.yaml, kept up to date with ua-parser: its device rules' {@code Spider}, or a browser it names a
 * bot) and a few that name themselves but that ua-parser takes for a browser, headless and automated browsers, and
 * the patterns of {@code beacon.botPatterns}. Thread-safe.
 *
 * <p>The rule it keeps: its verdict is ua-parser's, decided as ua-parser would, without running ua-parser's ~980 rules.
 * ua-parser calls a device a Spider when the first of its ~630 device rules that claims the user agent is a Spider rule,
 * and names the browser from the first of its ~350 browser rules that matches. A user agent is a crawler when a Spider
 * rule matches it and either the device or the browser's name says so (a phone rule may claim {@code CUBOT} or "asus"
 * inside made-up text after {@code Googlebot/2.1}, and ua-parser still names that browser Googlebot; the generic Spider
 * rule finds {@code silk} in Amazon Silk, whose Kindle rule comes first). Each rule carries the literals every match of
 * it contains ({@link RequiredLiterals}); one scan of the user agent ({@link LiteralScanner}, a table read per character)
 * finds which literals occur, and only a rule whose literals occur is run as a regular expression: in ua-parser's
 * order where the order decides the answer, the rarest literals first where it does not ({@code Decision}).
 * A user agent no Spider rule can match (nearly every browser) costs the scan and the few Spider rules its literals
 * allow; the cost of the rest is bounded by its length ({@link UserAgentVerdicts#MAX_USER_AGENT_CHARS}) and by
 * {@link #MAX_RULES_RUN}, so that a crafted one costs the event loop a bounded time, not a queue.
 */
public final class CrawlerDetector {
  /** Automation that announces itself in the User-Agent; ua-parser names these browsers, it does not call them bots. */
  static final Pattern HEADLESS = Pattern.compile(
    "HeadlessChrome|PhantomJS|SlimerJS|Puppeteer|Playwright|Selenium|WebDriver|Chrome-Lighthouse|Electron/.* Headless",
    Pattern.CASE_INSENSITIVE);

  /**
   * Crawlers that name themselves but that ua-parser takes for the device or browser they imitate (a Mac's Safari, a
   * phone's Chrome): Google's tools, Apple's, OpenAI's, ByteDance's and Amazon's agents.
   */
  private static final Pattern NAMED_CRAWLERS = Pattern.compile(
    "Google-InspectionTool|Mediapartners-Google|Storebot-Google|GoogleOther|Google-Extended|FeedFetcher-Google"
      + "|APIs-Google|Applebot|ChatGPT-User|OAI-SearchBot|Bytespider|Amazonbot", Pattern.CASE_INSENSITIVE);

  /** ua-parser's browser names for crawlers: Googlebot, bingbot, Twitterbot, MSIECrawler, Spider, and the like. */
  private static final Pattern CRAWLER_FAMILY = Pattern.compile("bot\\b|spider|crawler", Pattern.CASE_INSENSITIVE);
  private static final String SPIDER = "Spider";
  private static final Pattern SUBSTITUTION = Pattern.compile("\\$\\d");
  /** A rule's head {@code ^.{0,100}} followed by no {@code ?} or {@code +}. */
  private static final Pattern GREEDY_HEAD = Pattern.compile("\\^\\.\\{0,\\d+}(?![?+])");

  /**
   * Regular expressions run past the Spider rules for one user agent, at most: the costliest browser and crawler of
   * the corpus (src/test/resources/user-agents/corpus.txt) need a fraction of it; a user agent made to need more is
   * dropped as {@code costly_user_agent}, which bounds what one costs the event loop.
   */
  static final int MAX_RULES_RUN = 32;

  private final List<Pattern> extraPatterns;
  private final int maxRulesRun;

  /** Cheap once {@link #compile} ran: ua-parser's rules are compiled once per JVM. */
  public CrawlerDetector(List<Pattern> extraPatterns) {
    this(extraPatterns, MAX_RULES_RUN);
  }

  /** {@code maxRulesRun}: another budget than {@link #MAX_RULES_RUN}, to measure what the corpus needs. */
  CrawlerDetector(List<Pattern> extraPatterns, int maxRulesRun) {
    this.extraPatterns = List.copyOf(extraPatterns);
    this.maxRulesRun = maxRulesRun;
  }

  /**
   * Compiles ua-parser's rules and the scanner of their literals, once per JVM (about a second, blocking): the
   * gateway calls it on a worker while it starts, so that no event loop ever waits for it.
   */
  public static void compile() {
    Rules.SCANNER.states();
  }

  /** One of ua-parser's rules: its pattern, its replacement for the name, and the literals every match contains. */
  record Rule(Pattern pattern, String replacement, Need need) {
    /** Whether the rule may match a user agent whose literals found are {@code found}; cheap, a few bit tests. */
    boolean mayMatch(long[] found) {
      return need.holds(found);
    }
  }

  /** Loaded by the class loader on first use, once, and thread-safely. */
  static final class Rules {
    /** ua-parser's device rules, in its order. */
    static final List<Rule> DEVICES = new ArrayList<>();
    /** ua-parser's browser rules, in its order. */
    static final List<Rule> BROWSERS = new ArrayList<>();
    /** The positions in {@link #DEVICES} of the Spider rules. */
    static final List<Integer> SPIDERS = new ArrayList<>();
    /** The Spider rules at the head of the list: a match is a Spider, whatever the other rules say. */
    static final int LEADING_SPIDERS;
    /** The positions of the other device rules, those with the rarest literals first (see Decision). */
    static final int[] CLAIM_ORDER;
    /** Whether "spider" is in the user agent, in any case. */
    static final Need SPIDER_LITERAL;
    static final LiteralScanner SCANNER;
    /** What every match of {@link #HEADLESS} contains. */
    static final Need HEADLESS_NEED;
    /** What every match of {@link #NAMED_CRAWLERS} contains. */
    static final Need NAMED_NEED;

    static {
      Map<String, Object> rules;
      try (InputStream yaml = Parser.class.getResourceAsStream("/ua_parser/regexes.yaml")) {
        if (yaml == null) {
          throw new IllegalStateException("ua-parser's regexes.yaml is missing from the classpath");
        }
        rules = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      List<Rule> devices = read(rules, "device_parsers", "device_replacement");
      List<Rule> browsers = read(rules, "user_agent_parsers", "family_replacement");
      List<String> literals = new ArrayList<>();
      devices.forEach(rule -> rule.need().literals(literals));
      browsers.forEach(rule -> rule.need().literals(literals));
      Need headless = RequiredLiterals.of(HEADLESS);
      headless.literals(literals);
      Need named = RequiredLiterals.of(NAMED_CRAWLERS);
      named.literals(literals);
      literals.add("spider");
      SCANNER = new LiteralScanner(literals);
      Map<String, Integer> ids = SCANNER.ids();
      HEADLESS_NEED = headless.withIds(ids);
      NAMED_NEED = named.withIds(ids);
      for (Rule rule : devices) {
        if (SPIDER.equals(rule.replacement())) {
          SPIDERS.add(DEVICES.size());
        }
        DEVICES.add(new Rule(rule.pattern(), rule.replacement(), rule.need().withIds(ids)));
      }
      browsers.forEach(rule -> BROWSERS.add(new Rule(rule.pattern(), rule.replacement(), rule.need().withIds(ids))));
      SPIDER_LITERAL = Need.literal("spider").withIds(ids);
      int leading = 0;
      while (leading < SPIDERS.size() && SPIDERS.get(leading) == leading) {
        leading++;
      }
      LEADING_SPIDERS = leading;
      CLAIM_ORDER = claimOrder(devices);
    }

    /**
     * The device rules that are not Spider rules, those whose literals fewest other rules share first: a phone's own
     * rule ({@code CUBOT}, {@code KFTRWI}) before the generic ones ({@code Android}, {@code Build}), and the rules
     * with no literal last.
     */
    private static int[] claimOrder(List<Rule> devices) {
      Map<String, Integer> shared = new java.util.HashMap<>();
      for (Rule rule : devices) {
        List<String> named = new ArrayList<>();
        rule.need().literals(named);
        named.stream().distinct().forEach(literal -> shared.merge(literal, 1, Integer::sum));
      }
      return java.util.stream.IntStream.range(0, devices.size())
        .filter(position -> !SPIDER.equals(devices.get(position).replacement()))
        .boxed()
        .sorted(java.util.Comparator.comparingInt(position -> rarity(devices.get(position).need(), shared)))
        .mapToInt(Integer::intValue).toArray();
    }

    /** How many rules share the literals a text must hold for {@code need}: the fewer, the rarer a match. */
    private static int rarity(Need need, Map<String, Integer> shared) {
      if (need instanceof RequiredLiterals.Literal literal) {
        return shared.get(literal.text());
      }
      RequiredLiterals.Join join = (RequiredLiterals.Join) need;
      java.util.stream.IntStream parts = join.needs().stream().mapToInt(part -> rarity(part, shared));
      // all of them: as rare as the rarest; one of them: as common as the commonest; none: matched by anything
      return (join.all() ? parts.min() : parts.max()).orElse(Integer.MAX_VALUE);
    }

    /** uap-java compiles each rule with its regex_flag ("i": case-insensitive) and finds it anywhere. */
    private static List<Rule> read(Map<String, Object> rules, String list, String replacement) {
      @SuppressWarnings("unchecked")
      List<Map<String, String>> entries = (List<Map<String, String>>) rules.get(list);
      List<Rule> read = new ArrayList<>();
      for (Map<String, String> entry : entries) {
        String regex = entry.get("regex");
        String named = entry.get(replacement);
        Matcher greedyHead = GREEDY_HEAD.matcher(regex);
        if (named != null && !named.contains("$") && greedyHead.lookingAt()) {
          // a rule that names a constant: only whether it matches counts, and a lazy head finds that as well, trying
          // the nearest start first instead of the farthest
          regex = greedyHead.group() + "?" + regex.substring(greedyHead.end());
        }
        Pattern pattern = Pattern.compile(regex, "i".equals(entry.get("regex_flag")) ? Pattern.CASE_INSENSITIVE : 0);
        read.add(new Rule(pattern, entry.get(replacement), RequiredLiterals.of(pattern)));
      }
      return read;
    }
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
    long[] found = Rules.SCANNER.scan(userAgent);
    if (Rules.HEADLESS_NEED.holds(found) && HEADLESS.matcher(userAgent).find()) {
      return DropReason.HEADLESS_BROWSER;
    }
    if (Rules.NAMED_NEED.holds(found) && NAMED_CRAWLERS.matcher(userAgent).find()) {
      return DropReason.CRAWLER;
    }
    int spider = firstSpider(userAgent, found);
    if (spider < 0) {
      return null;
    }
    if (spider < Rules.LEADING_SPIDERS) {
      return DropReason.CRAWLER;
    }
    return new Decision(userAgent, found, maxRulesRun).crawler(spider);
  }

  /** The position of the first Spider rule that matches, or -1. */
  private static int firstSpider(String userAgent, long[] found) {
    for (int position : Rules.SPIDERS) {
      Rule rule = Rules.DEVICES.get(position);
      if (rule.mayMatch(found) && rule.pattern().matcher(userAgent).find()) {
        return position;
      }
    }
    return -1;
  }

  /**
   * The decision for a user agent that a Spider rule after other device rules matches: whether one of those claims it
   * (then ua-parser names the browser), within a budget of regular expressions run ({@link #MAX_RULES_RUN}).
   */
  private static final class Decision {
    private final String userAgent;
    private final long[] found;
    private final int budget;
    private int runs;

    Decision(String userAgent, long[] found, int budget) {
      this.userAgent = userAgent;
      this.found = found;
      this.budget = budget;
    }

    DropReason crawler(int spider) {
      Boolean device = deviceIsSpider(spider);
      if (device == null) {
        return DropReason.COSTLY_USER_AGENT;
      }
      if (device) {
        return DropReason.CRAWLER;
      }
      Optional<String> browser = browserFamily();
      if (browser == null) {
        return DropReason.COSTLY_USER_AGENT;
      }
      return browser.isPresent() && CRAWLER_FAMILY.matcher(browser.get()).find() ? DropReason.CRAWLER : null;
    }

    /** The rule's match, or null when it does not match; null too once the budget is spent (see {@link #spent}). */
    private Matcher run(Rule rule) {
      if (!rule.mayMatch(found) || ++runs > budget) {
        return null;
      }
      Matcher matcher = rule.pattern().matcher(userAgent);
      return matcher.find() ? matcher : null;
    }

    private boolean spent() {
      return runs > budget;
    }

    /**
     * Whether ua-parser's device is a Spider, null when the budget ran out first. Without "spider" in the user agent
     * no rule but a Spider rule can name one, so the device is a Spider exactly when no rule before the Spider rule
     * that matched claims it, whatever the order they are tried in: the rarest literals first, which finds a phone's
     * own rule at once. With "spider" in it, a rule may name the device from its text, and ua-parser's order decides.
     */
    Boolean deviceIsSpider(int spider) {
      if (!Rules.SPIDER_LITERAL.holds(found)) {
        for (int position : Rules.CLAIM_ORDER) {
          if (position >= spider) {
            continue;
          }
          Matcher match = run(Rules.DEVICES.get(position));
          if (match != null && deviceFamily(Rules.DEVICES.get(position), match) != null) {
            return false;
          }
          if (spent()) {
            return null;
          }
        }
        return true;
      }
      for (int position = Rules.LEADING_SPIDERS; position < spider; position++) {
        Matcher match = run(Rules.DEVICES.get(position));
        String family = match == null ? null : deviceFamily(Rules.DEVICES.get(position), match);
        if (family != null) {
          return SPIDER.equals(family);
        }
        if (spent()) {
          return null;
        }
      }
      return true;
    }

    /** ua-parser's browser family ({@code UserAgentParser}): empty for "Other", null when the budget ran out. */
    Optional<String> browserFamily() {
      for (Rule rule : Rules.BROWSERS) {
        Matcher match = run(rule);
        if (match != null) {
          String family = rule.replacement();
          if (family == null) {
            family = match.groupCount() >= 1 ? match.group(1) : null;
          } else if (family.contains("$1") && match.groupCount() >= 1 && match.group(1) != null) {
            family = family.replaceFirst("\\$1", Matcher.quoteReplacement(match.group(1)));
          }
          if (family != null) {
            return Optional.of(family);
          }
        }
        if (spent()) {
          return null;
        }
      }
      return Optional.empty();
    }
  }

  /** The device family a matching rule names ({@code DeviceParser}), or null when it names none. */
  private static String deviceFamily(Rule rule, Matcher matcher) {
    String family = rule.replacement();
    if (family == null) {
      return matcher.groupCount() >= 1 ? matcher.group(1) : null;
    }
    if (!family.contains("$")) {
      return family;
    }
    Matcher substitutions = SUBSTITUTION.matcher(family);
    List<String> all = new ArrayList<>();
    while (substitutions.find()) {
      all.add(substitutions.group());
    }
    for (String substitution : all) {
      int group = substitution.charAt(1) - '0';
      String value = group <= matcher.groupCount() && matcher.group(group) != null
        ? Matcher.quoteReplacement(matcher.group(group)) : "";
      family = family.replaceFirst("\\" + substitution, value);
    }
    return family.trim();
  }
}
