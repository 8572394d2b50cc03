package io.countergateway.config;

import java.util.List;
import java.util.regex.Pattern;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.regexes;

/** What every beacon route shares: how much body it takes, and the bot patterns added to the crawler list. */
public final class BeaconOptions {
  static final ConfigDef KEYS = ConfigDef.section("beacon");

  static {
    KEYS.retired("maxTrackedClients", "derived from the heap (docs/operations.md \"Sizing\")");
    KEYS.retired("maxKnownIds", "derived from the heap (docs/operations.md \"Sizing\")");
    KEYS.retired("userAgentCacheBytes", "derived from the heap (docs/operations.md \"Sizing\")");
  }

  /** sendBeacon bodies are capped at 64 KiB by browsers; nothing larger comes from a page. */
  public static final ConfigKey<Integer> MAX_BODY_BYTES = KEYS.define("maxBodyBytes", LOW, INT, 65_536, between(0, 1_048_576),
    "largest beacon body taken (bodies are read and ignored)");
  public static final ConfigKey<List<String>> BOT_PATTERNS = KEYS.define("botPatterns", MEDIUM, LIST, List.of(), regexes(),
    "User-Agent patterns (case-insensitive) whose beacons are dropped, besides the crawler list");

  private final int maxBodyBytes;
  private final List<Pattern> botPatterns;

  private BeaconOptions(ConfigSection section) {
    maxBodyBytes = section.get(MAX_BODY_BYTES);
    botPatterns = section.get(BOT_PATTERNS).stream()
      .map(pattern -> Pattern.compile(pattern, Pattern.CASE_INSENSITIVE)).toList();
  }

  static BeaconOptions from(ConfigSection section) {
    return new BeaconOptions(section);
  }

  public int getMaxBodyBytes() {
    return maxBodyBytes;
  }

  /** Case-insensitive regular expressions found anywhere in a User-Agent, on top of the crawler list. */
  public List<Pattern> getBotPatterns() {
    return botPatterns;
  }

}
