package io.countergateway.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.items;
import static io.countergateway.config.ConfigKey.notBlank;
import static io.countergateway.config.ConfigKey.regexes;

/**
 * What every beacon route shares: how much body it takes, the bot patterns added to the crawler list, and where the
 * tracker protocols (GoatCounter, Umami, Plausible) count each site's views.
 */
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

  /** The beacon script's default namespace: a site that names none counts there, whichever door it comes through. */
  public static final ConfigKey<String> TRACKER_NAMESPACE = KEYS.define("trackerNamespace", MEDIUM, STRING, "pageviews",
    notBlank(), "public namespace the tracker endpoints (/count, /api/send, /api/event) count a site's views in when "
      + "trackerSites does not name the site");
  public static final ConfigKey<List<String>> TRACKER_SITES = KEYS.define("trackerSites", MEDIUM, LIST, List.of(),
    items("[^=\\s]+=[^=\\s]+", "site=namespace"), "public namespace of each site the tracker endpoints take: "
      + "`site=namespace`, the site being the Host a GoatCounter script sends to, an Umami website id or a Plausible domain");

  private final int maxBodyBytes;
  private final List<Pattern> botPatterns;
  private final String trackerNamespace;
  private final boolean trackerNamespaceSet;
  private final Map<String, String> trackerSites;

  private BeaconOptions(ConfigSection section) {
    maxBodyBytes = section.get(MAX_BODY_BYTES);
    botPatterns = section.get(BOT_PATTERNS).stream()
      .map(pattern -> Pattern.compile(pattern, Pattern.CASE_INSENSITIVE)).toList();
    trackerNamespace = section.get(TRACKER_NAMESPACE);
    trackerNamespaceSet = section.has(TRACKER_NAMESPACE);
    Map<String, String> sites = new LinkedHashMap<>();
    for (String entry : section.get(TRACKER_SITES)) {
      int equals = entry.indexOf('=');
      // sites are host names, ids and domains: compared as a browser compares host names, without case
      String site = entry.substring(0, equals).toLowerCase(java.util.Locale.ROOT);
      if (sites.put(site, entry.substring(equals + 1)) != null) {
        throw new ConfigException(section.key(TRACKER_SITES), "names the site '" + site + "' twice");
      }
    }
    trackerSites = java.util.Collections.unmodifiableMap(sites);
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

  /** Where a tracker's site counts when {@link #getTrackerSites()} does not name it. */
  public String getTrackerNamespace() {
    return trackerNamespace;
  }

  /**
   * Whether {@code trackerNamespace} was set: a namespace named on purpose must be declared and public; the default
   * one may be absent: the tracker endpoints then refuse a view of a site no entry names, as a beacon to an undeclared
   * namespace is refused (404).
   */
  public boolean isTrackerNamespaceSet() {
    return trackerNamespaceSet;
  }

  /** Site (lower case) to namespace, in the order written. */
  public Map<String, String> getTrackerSites() {
    return trackerSites;
  }

}
