package io.countergateway.internal.beacon;

import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.model.PageIds;
import ua_parser.OS;
import ua_parser.Parser;
import ua_parser.UserAgent;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a counted page view adds to its windowed namespace's companions (src/DESIGN.md §10 *Companion namespaces*): one view of the site
 * total and its minute, of its source (the referrer's host, {@code www.} dropped; {@link #DIRECT} when there is none or it is the
 * site's own page), of its campaign ({@code utm_source / utm_medium / utm_campaign}, only when tagged), of its browser,
 * operating system and device class. Every companion of a namespace therefore sums to the namespace's views, except
 * campaigns, which sum to the tagged views.
 *
 * <p>Bounded as page ids are: at most {@link #MAX_VALUES} distinct values per companion and bucket on this event loop,
 * the views of further values counted under {@code (other)}, so a flood of made-up referrers costs rows, not the
 * table. The browser and system names are ua-parser's ({@code Chrome}, {@code Mobile Safari}; {@code Mac OS X},
 * {@code iOS}), kept for the last {@link #MAX_AGENTS} user agents seen, since running its rules costs far more than
 * the rest of a beacon; a user agent longer than {@link #MAX_PARSED_CHARS} is never parsed (no browser sends one) and
 * counts as {@code (other)}. Confined to the event loop that created it.
 */
public final class VisitDimensions {
  /** Distinct values one companion takes per bucket on one event loop before the rest fold into {@code (other)}. */
  public static final int MAX_VALUES = 1_000;
  /** User agents whose names are remembered. */
  public static final int MAX_AGENTS = 2_000;
  /** Longer user agents are not parsed: browsers send 100–300 characters. */
  public static final int MAX_PARSED_CHARS = 300;
  /** The source of a view without a referrer from another site. */
  public static final String DIRECT = "(direct)";
  /** A campaign's part that was not given ({@code newsletter / (none) / spring}). */
  public static final String NOT_GIVEN = "(none)";
  /** A campaign tag is cut to this many characters: its parts and separators stay within a stored id. */
  static final int MAX_TAG_CHARS = 80;
  static final String DESKTOP = "desktop";
  static final String MOBILE = "mobile";
  static final String TABLET = "tablet";
  private static final Pattern TABLET_AGENT = Pattern.compile("iPad|Tablet|Kindle|Silk/|PlayBook|Nexus (7|9|10)\\b");
  private static final Pattern MOBILE_AGENT = Pattern.compile("Mobi|iPhone|iPod|Android|BlackBerry|Opera Mini|IEMobile");

  /** A user agent's names in the browser, system and device companions. */
  record Agent(String browser, String os, String device) {
  }

  private static final Agent UNPARSED = new Agent(ReservedIds.OTHER, ReservedIds.OTHER, ReservedIds.OTHER);

  private final int storedChars;
  private final Clock clock;
  private final Map<String, Agent> agents = new LinkedHashMap<>(256, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Agent> eldest) {
      return size() > MAX_AGENTS;
    }
  };
  /** Per companion namespace: the bucket its values are of, and those values. */
  private final Map<String, Values> values = new HashMap<>();

  /**
   * {@code storedChars}: the longest id the table stores ({@code limits.maxIdLength}); {@code clock}: the gateway's,
   * which put the view into its bucket, and puts it into its minute.
   */
  public VisitDimensions(int storedChars, Clock clock) {
    this.storedChars = storedChars;
    this.clock = clock;
  }

  /**
   * Compiles ua-parser's rules, once per JVM (about a second, blocking): the gateway calls it on a worker while it
   * starts, so that no event loop waits for it.
   */
  public static void compile() {
    Names.PARSER.hashCode();
  }

  /**
   * The increments {@code view} (a counted view of {@code namespace}, windowed) adds to the namespace's companions.
   * {@code pageHost}: the host of the page that sent it, null when unknown; {@code userAgent} null when none.
   */
  public List<Increment> increments(NamespaceOptions namespace, Increment view, PageVisit visit, String pageHost,
                                    String userAgent) {
    long bucket = view.key().bucket();
    List<Increment> increments = new ArrayList<>(6);
    increments.add(increment(namespace, NamespaceOptions.SITE, NamespaceOptions.SITE_ID, bucket));
    increments.add(bounded(namespace, "sources", source(visit.referrer(), pageHost), bucket));
    String campaign = campaign(visit);
    if (campaign != null) {
      increments.add(bounded(namespace, "campaigns", campaign, bucket));
    }
    Agent agent = agent(userAgent);
    increments.add(bounded(namespace, "browsers", agent.browser(), bucket));
    increments.add(bounded(namespace, "os", agent.os(), bucket));
    increments.add(bounded(namespace, "devices", agent.device(), bucket));
    NamespaceOptions minutes = namespace.companion(NamespaceOptions.MINUTES);
    increments.add(new Increment(new CounterKey(minutes.getName(), NamespaceOptions.SITE_ID,
      minutes.getWindow().bucketOf(clock.instant())), 1));
    return increments;
  }

  /** The site-total key of {@code namespace} in {@code bucket}: what its distinct visitors are counted under. */
  public static CounterKey siteKey(NamespaceOptions namespace, long bucket) {
    return new CounterKey(namespace.companion(NamespaceOptions.SITE).getName(), NamespaceOptions.SITE_ID, bucket);
  }

  private static Increment increment(NamespaceOptions namespace, String dimension, String id, long bucket) {
    return new Increment(new CounterKey(namespace.companion(dimension).getName(), id, bucket), 1);
  }

  private Increment bounded(NamespaceOptions namespace, String dimension, String value, long bucket) {
    String id = PageIds.of(value, storedChars);
    String companion = namespace.companion(dimension).getName();
    Values known = values.computeIfAbsent(companion, name -> new Values());
    if (known.bucket != bucket) {
      known.bucket = bucket;
      known.ids.clear();
    }
    if (id == null || !known.ids.contains(id) && known.ids.size() >= MAX_VALUES) {
      id = ReservedIds.OTHER;
    } else {
      known.ids.add(id);
    }
    return new Increment(new CounterKey(companion, id, bucket), 1);
  }

  /**
   * The source a referrer names: its host in lower case without {@code www.}; {@link #DIRECT} for none, for an empty
   * one and for the site's own pages ({@code pageHost}, a view reached from another page of the site); {@code (other)}
   * for one without a host.
   */
  static String source(String referrer, String pageHost) {
    if (referrer == null || referrer.isBlank()) {
      return DIRECT;
    }
    String host;
    try {
      host = new URI(referrer.trim()).getHost();
    } catch (URISyntaxException e) {
      host = null;
    }
    if (host == null || host.isEmpty()) {
      return ReservedIds.OTHER;
    }
    host = withoutWww(host);
    return pageHost != null && host.equals(withoutWww(pageHost)) ? DIRECT : host;
  }

  private static String withoutWww(String host) {
    String lower = host.toLowerCase(Locale.ROOT);
    if (lower.endsWith(".")) {
      lower = lower.substring(0, lower.length() - 1);
    }
    return lower.startsWith("www.") ? lower.substring(4) : lower;
  }

  /** {@code source / medium / campaign} of a tagged view ({@link #NOT_GIVEN} for a missing part); null when untagged. */
  static String campaign(PageVisit visit) {
    String source = tag(visit.utmSource());
    String medium = tag(visit.utmMedium());
    String campaign = tag(visit.utmCampaign());
    if (source == null && medium == null && campaign == null) {
      return null;
    }
    return orNone(source) + " / " + orNone(medium) + " / " + orNone(campaign);
  }

  private static String tag(String value) {
    if (value == null) {
      return null;
    }
    String trimmed = value.strip();
    if (trimmed.isEmpty()) {
      return null;
    }
    return trimmed.length() > MAX_TAG_CHARS ? trimmed.substring(0, MAX_TAG_CHARS) : trimmed;
  }

  private static String orNone(String part) {
    return part == null ? NOT_GIVEN : part;
  }

  /** The names of {@code userAgent}, from the cache or ua-parser. */
  Agent agent(String userAgent) {
    if (userAgent == null || userAgent.isBlank() || userAgent.length() > MAX_PARSED_CHARS) {
      return UNPARSED;
    }
    Agent agent = agents.get(userAgent);
    if (agent == null) {
      agent = parse(userAgent);
      agents.put(userAgent, agent);
    }
    return agent;
  }

  /** User agents whose names are held (for tests). */
  int agentsHeld() {
    return agents.size();
  }

  static Agent parse(String userAgent) {
    UserAgent browser = Names.PARSER.parseUserAgent(userAgent);
    OS os = Names.PARSER.parseOS(userAgent);
    return new Agent(named(browser == null ? null : browser.family), named(os == null ? null : os.family),
      device(userAgent));
  }

  /** ua-parser says {@code Other} when no rule names it. */
  private static String named(String family) {
    return family == null || family.isEmpty() || family.equals("Other") ? ReservedIds.OTHER : family;
  }

  /** The device class as browsers announce it: tablets first (an Android tablet says Android without Mobile). */
  static String device(String userAgent) {
    if (TABLET_AGENT.matcher(userAgent).find()
      || userAgent.contains("Android") && !userAgent.contains("Mobile")) {
      return TABLET;
    }
    return MOBILE_AGENT.matcher(userAgent).find() ? MOBILE : DESKTOP;
  }

  private static final class Values {
    private long bucket = Long.MIN_VALUE;
    private final Set<String> ids = new HashSet<>();
  }

  /** ua-parser's rules, compiled by the class loader on first use, once and thread-safely. */
  private static final class Names {
    private static final Parser PARSER = new Parser();
  }
}
