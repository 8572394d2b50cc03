package io.countergateway.internal.beacon;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import ua_parser.Parser;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * {@code java -jar target/counter-gateway-bench.jar user-agent-filter}: what the bot filter costs per User-Agent, in
 * nanoseconds, for a verdict from the cache, a new browser, a crawler, the corpus's made-up undecidable ones and the
 * costliest one a search finds within the length cap; beside it, in the same run, what the classifier it replaced
 * spent: its check on the event loop (the headless pattern and ua-parser's Spider rules, every one) and ua-parser's
 * whole parse, which it ran on one thread for the user agents that check could not decide. In this package because the
 * rules it measures are the filter's, and not public there.
 */
@Command(name = "user-agent-filter", mixinStandardHelpOptions = true, sortOptions = false,
  description = "Measures the bot filter's cost per User-Agent over a corpus of real and crafted ones, and the "
    + "replaced classifier's (the Spider rules on the loop, ua-parser's whole parse on a thread) in the same run.")
public final class UserAgentFilterCommand implements Callable<Integer> {
  @Option(names = "--corpus", defaultValue = "src/test/resources/user-agents/corpus.txt",
    description = "the corpus: lines 'browser|crawler|crafted <user agent>' (default: ${DEFAULT-VALUE})")
  private Path corpus;

  @Option(names = "--rounds", defaultValue = "200", description = "timed classifications of each user agent (default: ${DEFAULT-VALUE})")
  private int rounds;

  @Option(names = "--search", defaultValue = "3000",
    description = "made-up user agents tried in the search for the costliest (default: ${DEFAULT-VALUE})")
  private int search;

  @Option(names = "--seed", defaultValue = "1", description = "the search's seed (default: ${DEFAULT-VALUE})")
  private long seed;

  /** Nanoseconds of one call: the median of {@code rounds} calls, after as many unmeasured. */
  private long nanos(Runnable call, int rounds) {
    long[] times = new long[rounds];
    for (int i = 0; i < rounds; i++) {
      call.run();
    }
    for (int i = 0; i < rounds; i++) {
      long start = System.nanoTime();
      call.run();
      times[i] = System.nanoTime() - start;
    }
    Arrays.sort(times);
    return times[rounds / 2];
  }

  /** Mean and greatest nanoseconds per user agent of {@code classify} over {@code agents}. */
  private long[] cost(List<String> agents, Consumer<String> classify) {
    long sum = 0;
    long max = 0;
    for (String agent : agents) {
      long each = nanos(() -> classify.accept(agent), rounds);
      sum += each;
      max = Math.max(max, each);
    }
    return new long[] {sum / agents.size(), max};
  }

  @Override
  public Integer call() throws Exception {
    long compileStart = System.nanoTime();
    CrawlerDetector.compile();
    long compileMillis = (System.nanoTime() - compileStart) / 1_000_000;
    long oldStart = System.nanoTime();
    Parser parser = new Parser();
    long oldCompileMillis = (System.nanoTime() - oldStart) / 1_000_000;

    Map<String, List<String>> kinds = new LinkedHashMap<>();
    for (String line : Files.readAllLines(corpus, StandardCharsets.UTF_8)) {
      if (!line.isBlank() && !line.startsWith("#")) {
        kinds.computeIfAbsent(line.substring(0, line.indexOf(' ')), kind -> new ArrayList<>()).add(line.substring(line.indexOf(' ') + 1));
      }
    }
    CrawlerDetector detector = new CrawlerDetector(List.of());
    Consumer<String> fresh = detector::classify;
    Consumer<String> oldCheck = agent -> {
      if (!CrawlerDetector.HEADLESS.matcher(agent).find()) {
        for (int position : CrawlerDetector.Rules.SPIDERS) {
          if (CrawlerDetector.Rules.DEVICES.get(position).pattern().matcher(agent).find()) {
            return;
          }
        }
      }
    };
    Consumer<String> oldParse = agent -> {
      parser.parseDevice(agent);
      parser.parseUserAgent(agent);
    };

    List<String> browsers = kinds.getOrDefault("browser", List.of());
    List<String> crawlers = kinds.getOrDefault("crawler", List.of());
    List<String> crafted = kinds.getOrDefault("crafted", List.of());
    String worst = costliest(detector, kinds.values().stream().flatMap(List::stream).toList());

    UserAgentVerdicts verdicts = new UserAgentVerdicts(detector, 4 << 20);
    browsers.forEach(verdicts::classify);
    long hitStart = System.nanoTime();
    int hits = 0;
    for (int round = 0; round < rounds * 10; round++) {
      for (String agent : browsers) {
        hits += verdicts.classify(agent) == null ? 1 : 0;
      }
    }
    long hit = (System.nanoTime() - hitStart) / ((long) rounds * 10 * browsers.size());

    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "Compiled in %d ms (ua-parser's own Parser: %d ms); %s; %d of %d cache hits "
        + "counted.%n%n", compileMillis, oldCompileMillis, CrawlerDetector.Rules.SCANNER, hits, rounds * 10 * browsers.size()));
    out.append("| user agents | n | filter: mean ns | filter: max ns | old check on the loop: mean ns | "
      + "old whole parse on its thread: mean ns | max ns |\n|---|---:|---:|---:|---:|---:|---:|\n");
    out.append(String.format(Locale.ROOT, "| cache hit (browsers seen before) | %d | %,d | | same cache | | |%n", browsers.size(), hit));
    row(out, "new browser", browsers, fresh, oldCheck, oldParse);
    row(out, "crawler", crawlers, fresh, oldCheck, oldParse);
    row(out, "crafted, undecidable by the old check", crafted, fresh, oldCheck, oldParse);
    row(out, "crafted, costliest of " + search + " searched", List.of(worst), fresh, oldCheck, oldParse);
    out.append(String.format(Locale.ROOT, "%nThe costliest (%d characters, verdict %s):%n%n    %s%n", worst.length(),
      detector.classify(worst), worst));
    System.out.print(out);
    return 0;
  }

  private void row(StringBuilder out, String name, List<String> agents, Consumer<String> fresh, Consumer<String> oldCheck,
                   Consumer<String> oldParse) {
    long[] now = cost(agents, fresh);
    long[] check = cost(agents, oldCheck);
    long[] parse = cost(agents, oldParse);
    out.append(String.format(Locale.ROOT, "| %s | %d | %,d | %,d | %,d | %,d | %,d |%n", name, agents.size(), now[0], now[1],
      check[0], parse[0], parse[1]));
  }

  /**
   * The costliest user agent a search finds within the length cap: the literals of ua-parser's rules (brand, browser
   * and bot names) and separators, each candidate grown from a random cut of the costliest so far, timed at its fastest
   * of five.
   */
  private String costliest(CrawlerDetector detector, List<String> corpus) {
    List<String> literals = CrawlerDetector.Rules.SCANNER.ids().keySet().stream().sorted().toList();
    String[] separators = {" ", "; ", "/", ") ", " (", ";", "-", "_", " Build/", " Mobile ", "1", "a", "bot",
      "Bot/1.0", "Android ", "Linux; ", " like ", ":", "."};
    Random random = new Random(seed);
    String best = corpus.get(0);
    long bestNanos = 0;
    for (int i = 0; i < search; i++) {
      StringBuilder agent = new StringBuilder(random.nextBoolean() ? "Mozilla/5.0 (Linux; Android 9; "
        : best.substring(0, random.nextInt(best.length())));
      while (agent.length() < UserAgentVerdicts.MAX_USER_AGENT_CHARS) {
        agent.append(random.nextInt(3) == 0 ? literals.get(random.nextInt(literals.size()))
          : separators[random.nextInt(separators.length)]);
        if (random.nextInt(4) == 0) {
          agent.append(random.nextBoolean() ? " " : "; ");
        }
      }
      String candidate = agent.substring(0, UserAgentVerdicts.MAX_USER_AGENT_CHARS);
      long nanos = Long.MAX_VALUE;
      for (int run = 0; run < 5; run++) {
        long start = System.nanoTime();
        detector.classify(candidate);
        nanos = Math.min(nanos, System.nanoTime() - start);
      }
      if (nanos > bestNanos) {
        bestNanos = nanos;
        best = candidate;
      }
    }
    return best;
  }
}
