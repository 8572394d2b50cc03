package io.countergateway.config;

import java.util.List;
import java.util.regex.Pattern;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.regexes;

/** What every beacon route shares: how much body it takes, and the bot patterns added to the crawler list. */
public final class BeaconOptions {
  static final ConfigDef KEYS = ConfigDef.section("beacon");
  /** sendBeacon bodies are capped at 64 KiB by browsers; nothing larger comes from a page. */
  public static final ConfigKey<Integer> MAX_BODY_BYTES = KEYS.define("maxBodyBytes", INT, 65_536, between(0, 1_048_576),
    "largest beacon body taken (bodies are read and ignored)");
  public static final ConfigKey<List<String>> BOT_PATTERNS = KEYS.define("botPatterns", LIST, List.of(), regexes(),
    "User-Agent patterns (case-insensitive) whose beacons are dropped, besides the crawler list");
  /**
   * Each record is a token bucket and the hashes of its ids: ~250 bytes for a person's client, ~1.5 KB for one at the
   * default id cap of 300, so 20,000 clients take ~5 MB, and at most ~29 MB when every one of them is capped: what
   * fits the heap of conf/jvm.options beside the other bounds (config.MemoryBudget). A crowd larger than this pushes
   * the least recently seen out, and they start afresh.
   */
  public static final ConfigKey<Integer> MAX_TRACKED_CLIENTS = KEYS.define("maxTrackedClients", INT, 20_000,
    between(100, 10_000_000), "client addresses whose per-namespace beacon limits are remembered (least recently seen forgotten first)");

  /**
   * Per event loop (two per core): the weight is a user agent's characters plus ~120 bytes of entry, so the default
   * 2 MiB holds ~20,000 browsers' user agents or ~3,200 of the longest a beacon takes; sized with the other bounds to
   * fit the heap of conf/jvm.options (MemoryBudget).
   */
  public static final ConfigKey<Integer> USER_AGENT_CACHE_BYTES = KEYS.define("userAgentCacheBytes", INT, 2 * 1024 * 1024,
    between(0, 256 * 1024 * 1024), "bytes of user-agent verdicts each event loop remembers (least recently used forgotten first); 0 decides every beacon afresh");

  private final int maxBodyBytes;
  private final List<Pattern> botPatterns;
  private final int maxTrackedClients;
  private final int userAgentCacheBytes;

  private BeaconOptions(ConfigSection section) {
    maxBodyBytes = section.get(MAX_BODY_BYTES);
    botPatterns = section.get(BOT_PATTERNS).stream()
      .map(pattern -> Pattern.compile(pattern, Pattern.CASE_INSENSITIVE)).toList();
    maxTrackedClients = section.get(MAX_TRACKED_CLIENTS);
    userAgentCacheBytes = section.get(USER_AGENT_CACHE_BYTES);
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

  /** Bytes of user-agent verdicts each event loop remembers. */
  public int getUserAgentCacheBytes() {
    return userAgentCacheBytes;
  }

  /** Client addresses whose per-namespace beacon limits are remembered at once. */
  public int getMaxTrackedClients() {
    return maxTrackedClients;
  }
}
