package io.countergateway.internal.beacon;

import ua_parser.Parser;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

/**
 * The user agents of {@code src/test/resources/user-agents/corpus.txt}, and the verdict ua-parser itself gives (its
 * whole device and browser lists, run one rule after another), which the bot filter must give too.
 */
final class UserAgentCorpus {
  enum Kind { BROWSER, CRAWLER, CRAFTED }

  record Entry(Kind kind, String userAgent) {
  }

  private static final Parser PARSER = new Parser();
  private static final Pattern CRAWLER_FAMILY = Pattern.compile("bot\\b|spider|crawler", Pattern.CASE_INSENSITIVE);

  private UserAgentCorpus() {
  }

  static List<Entry> all() {
    try (InputStream in = UserAgentCorpus.class.getResourceAsStream("/user-agents/corpus.txt")) {
      List<Entry> entries = new ArrayList<>();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        int space = line.indexOf(' ');
        entries.add(new Entry(Kind.valueOf(line.substring(0, space).toUpperCase()), line.substring(space + 1)));
      }
      return entries;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<String> of(Kind kind) {
    return all().stream().filter(entry -> entry.kind() == kind).map(Entry::userAgent).toList();
  }

  /** ua-parser's crawler verdict: a Spider rule matches, and the device is a Spider or the browser is named a bot. */
  static boolean uaParserSaysCrawler(String userAgent) {
    boolean spiderRule = CrawlerDetector.Rules.SPIDERS.stream()
      .anyMatch(position -> CrawlerDetector.Rules.DEVICES.get(position).pattern().matcher(userAgent).find());
    return spiderRule && ("Spider".equals(PARSER.parseDevice(userAgent).family)
      || CRAWLER_FAMILY.matcher(PARSER.parseUserAgent(userAgent).family).find());
  }

  /**
   * Made-up user agents built to reach every path of the matcher: the corpus's own, cut and spliced at random, with
   * the literals of ua-parser's rules (brand names, bot names, "Build", "Spider") and separators put in.
   */
  static List<String> crafted(int count, long seed) {
    Random random = new Random(seed);
    List<String> literals = new ArrayList<>(CrawlerDetector.Rules.SCANNER.ids().keySet());
    literals.sort(null);
    List<Entry> corpus = all();
    String[] separators = {" ", "; ", "/", ") ", " (", "-", "_", " Build/", "1.0", "Spider", "CUBOT ", "silk/", "Bot/2"};
    List<String> made = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String base = corpus.get(random.nextInt(corpus.size())).userAgent();
      StringBuilder agent = new StringBuilder(base.substring(0, random.nextInt(base.length())));
      int length = 20 + random.nextInt(UserAgentVerdicts.MAX_USER_AGENT_CHARS - 20);
      while (agent.length() < length) {
        String literal = literals.get(random.nextInt(literals.size()));
        agent.append(random.nextBoolean() ? literal : literal.toUpperCase()).append(separators[random.nextInt(separators.length)]);
      }
      made.add(agent.substring(0, Math.min(agent.length(), UserAgentVerdicts.MAX_USER_AGENT_CHARS)));
    }
    return made;
  }
}
