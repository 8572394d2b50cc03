package io.countergateway.config;

import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.HIGH;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.regex;

/** A declared record type: how many slot rows its counters spread over, and whether anonymous beacons may bump it. */
public final class NamespaceOptions {
  static final ConfigDef KEYS = ConfigDef.section("namespaces.<name>");
  /** About the number of concurrent writers (coalescers times replicas), not the request concurrency. */
  public static final ConfigKey<Integer> SLOTS = KEYS.define("slots", HIGH, INT, 16, between(1, 1024),
    "slot rows per counter; at least replicas × ingest verticles × (`batching.maxInFlight` + 1), see *Replica lanes*");
  public static final ConfigKey<Boolean> PUBLIC = KEYS.define("public", HIGH, BOOLEAN, false, any(),
    "takes anonymous beacons (see *Beacons*)");
  /** On by default for public namespaces: they are the ones crawlers reach. */
  public static final ConfigKey<Boolean> DROP_BOTS = KEYS.defineDerived("beacon.dropBots", MEDIUM, BOOLEAN, "= `public`", any(),
    "beacons from crawlers and headless browsers are answered 204 and not counted");
  public static final ConfigKey<Boolean> HONOR_DO_NOT_TRACK = KEYS.define("beacon.honorDoNotTrack", MEDIUM, BOOLEAN, false, any(),
    "beacons sent with `DNT: 1` are answered 204 and not counted");
  public static final ConfigKey<Boolean> HONOR_GLOBAL_PRIVACY_CONTROL = KEYS.define("beacon.honorGlobalPrivacyControl", MEDIUM,
    BOOLEAN, false, any(), "beacons sent with `Sec-GPC: 1` are answered 204 and not counted");
  public static final ConfigKey<Boolean> UNIQUE = KEYS.define("unique", MEDIUM, BOOLEAN, false, any(),
    "also estimate distinct visitors per counter and bucket; public windowed namespaces only (see *Beacons*)");
  /**
   * Unset: {@code limits.idPattern} for the JSON API, any page path for beacons. Set, a beacon whose id it does not
   * match is counted under the namespace's {@code (invalid)} id, not refused.
   */
  public static final ConfigKey<String> ID_PATTERN = KEYS.defineOptional("idPattern", MEDIUM, STRING, regex(),
    "what this namespace's ids may look like (unset: `limits.idPattern` for the JSON API, any page path for beacons; "
      + "a beacon it does not match counts under `(invalid)`); see *Exposing it to the internet*");
  public static final ConfigKey<Integer> MAX_ID_LENGTH = KEYS.defineOptional("maxIdLength", MEDIUM, INT, between(1, 255),
    "longest id of this namespace (unset: `limits.maxIdLength`)");
  public static final ConfigKey<Boolean> ANONYMOUS_READS = KEYS.define("anonymousReads", MEDIUM, BOOLEAN, false, any(),
    "with `auth.tokens` set, reads of this namespace need no token (otherwise `read`, `write` or `admin`)");
  /**
   * A flood ceiling per client address and namespace, not a page-view rate: an office, a carrier NAT or a proxy puts
   * many people behind one address (30 people viewing 40 pages a second together stay far below it).
   */
  public static final ConfigKey<Integer> PER_CLIENT_PER_MINUTE = KEYS.define("beacon.perClientPerMinute", MEDIUM, INT, 6_000,
    between(0, 100_000_000), "beacons one client address may send per minute, sustained, before the rest are dropped "
      + "`rate_limited`: a flood ceiling (0 = none)");
  public static final ConfigKey<Integer> PER_CLIENT_BURST = KEYS.define("beacon.perClientBurst", LOW, INT, 1_200,
    between(1, 100_000_000), "beacons one client address may send at once before `perClientPerMinute` applies");
  /** What stops inflation: one client repeating one page; no person views one page once a second for long. */
  public static final ConfigKey<Integer> PER_PAGE_PER_MINUTE = KEYS.define("beacon.perPagePerMinute", MEDIUM, INT, 60,
    between(0, 100_000_000), "views of one id one client address may have counted per minute, sustained; the repeats "
      + "past it are dropped `rate_limited` (0 = no limit)");
  public static final ConfigKey<Integer> PER_PAGE_BURST = KEYS.define("beacon.perPageBurst", LOW, INT, 30,
    between(1, 100_000_000), "views of one id one client address may have counted at once before `perPagePerMinute` "
      + "applies");
  public static final ConfigKey<Integer> IDS_PER_CLIENT_PER_HOUR = KEYS.define("beacon.idsPerClientPerHour", MEDIUM, INT, 300,
    between(0, 100_000), "new ids one client address may add per hour; its views of further new ids are counted "
      + "under `(other)` (0 = no budget)");
  public static final ConfigKey<Integer> NEW_IDS_PER_HOUR = KEYS.define("beacon.newIdsPerHour", MEDIUM, INT, 10_000,
    between(0, 100_000_000), "new ids the namespace takes per hour from all clients; views of further new ids are "
      + "counted under `(other)` (0 = no budget)");

  /**
   * Between a windowed namespace's name and a dimension in the name of its companion namespaces ({@code pageviews~sources}):
   * not a character a declared name may hold, so no declared namespace can be a companion.
   */
  public static final String COMPANION_SEPARATOR = "~";
  /** The site's total views (and distinct visitors, where the namespace counts them): one counter, {@link #SITE_ID}. */
  public static final String SITE = "site";
  /** The one id of a {@link #SITE} companion. */
  public static final String SITE_ID = "total";
  /**
   * The companions every windowed namespace has, the gateway counting each beacon into them (src/DESIGN.md §10 *Companion namespaces*): the
   * site total, then the referrer hosts, the campaigns, the browsers, operating systems and device classes.
   */
  public static final List<String> COMPANIONS = List.of(SITE, "sources", "campaigns", "browsers", "os", "devices",
    "minutes");
  /**
   * The site's views per minute, kept {@link #MINUTES_KEPT}: the "last hour" a site owner watches live, whatever the
   * namespace's own bucket. One counter, {@link #SITE_ID}; no distinct visitors (a sketch a minute would cost more than
   * the view is worth).
   */
  public static final String MINUTES = "minutes";
  static final Duration MINUTES_KEPT = Duration.ofHours(2);
  /** The longest declared name of a windowed namespace: its longest companion's name fits a record type (64). */
  static final int MAX_WINDOWED_NAME = 64 - COMPANION_SEPARATOR.length() - "campaigns".length();

  private final String name;
  /** Null for a declared namespace; for a companion, the windowed namespace whose beacons it counts. */
  private final NamespaceOptions parent;
  /** A windowed namespace's companions, in {@link #COMPANIONS}' order; empty for any other. */
  private final List<NamespaceOptions> companions;
  private final int slots;
  private final boolean isPublic;
  private final boolean dropBots;
  private final boolean honorDoNotTrack;
  private final boolean honorGlobalPrivacyControl;
  /** Null for a plain namespace: one value per counter, no buckets. */
  private final WindowOptions window;
  private final boolean unique;
  /** Null: the limits' pattern and length. */
  private final Pattern idPattern;
  private final Integer maxIdLength;
  private final boolean anonymousReads;
  private final int perClientPerMinute;
  private final int perClientBurst;
  private final int idsPerClientPerHour;
  private final int perPagePerMinute;
  private final int perPageBurst;
  private final int newIdsPerHour;

  private NamespaceOptions(String name, ConfigSection section) {
    this.name = name;
    parent = null;
    slots = section.get(SLOTS);
    isPublic = section.get(PUBLIC);
    dropBots = section.get(DROP_BOTS, isPublic);
    honorDoNotTrack = section.get(HONOR_DO_NOT_TRACK);
    honorGlobalPrivacyControl = section.get(HONOR_GLOBAL_PRIVACY_CONTROL);
    window = section.json().containsKey("window") ? WindowOptions.from(section.section("window")) : null;
    unique = section.get(UNIQUE);
    String pattern = section.get(ID_PATTERN);
    idPattern = pattern == null ? null : Pattern.compile(pattern);
    maxIdLength = section.get(MAX_ID_LENGTH);
    anonymousReads = section.get(ANONYMOUS_READS);
    perClientPerMinute = section.get(PER_CLIENT_PER_MINUTE);
    perClientBurst = section.get(PER_CLIENT_BURST);
    idsPerClientPerHour = section.get(IDS_PER_CLIENT_PER_HOUR);
    perPagePerMinute = section.get(PER_PAGE_PER_MINUTE);
    perPageBurst = section.get(PER_PAGE_BURST);
    newIdsPerHour = section.get(NEW_IDS_PER_HOUR);
    if (unique && window == null) {
      throw new ConfigException(section.key(UNIQUE), "unique visitors are counted per bucket: only a "
        + "windowed namespace (" + section.key("window") + ") may set unique: true");
    }
    if (unique && !isPublic) {
      throw new ConfigException(section.key(UNIQUE), "unique visitors are counted from beacons: only a "
        + "public namespace (" + section.key(PUBLIC) + ": true) may set unique: true");
    }
    if (window != null && name.length() > MAX_WINDOWED_NAME) {
      throw new ConfigException("namespaces." + name, "a windowed namespace's name must be at most " + MAX_WINDOWED_NAME
        + " characters: its companions (" + name + COMPANION_SEPARATOR + "campaigns, …) must fit a record type of 64");
    }
    // made last: a companion copies the fields read above
    companions = window == null ? List.of()
      : COMPANIONS.stream().map(dimension -> new NamespaceOptions(this, dimension)).toList();
  }

  /**
   * The companion {@code dimension} of the windowed namespace {@code parent}: its window (minute buckets kept two hours
   * for {@link #MINUTES}), slots and read rights; written
   * only by the gateway (never public, never by a client); counting distinct visitors only as the {@link #SITE} total of
   * a namespace that counts them.
   */
  private NamespaceOptions(NamespaceOptions parent, String dimension) {
    name = parent.name + COMPANION_SEPARATOR + dimension;
    this.parent = parent;
    slots = parent.slots;
    isPublic = false;
    dropBots = false;
    honorDoNotTrack = false;
    honorGlobalPrivacyControl = false;
    window = dimension.equals(MINUTES) ? new WindowOptions(WindowOptions.Bucket.MINUTE, MINUTES_KEPT,
      parent.window.getMaxFutureSkew(), (int) MINUTES_KEPT.toMinutes(), parent.window.getExpiryIntervalSeconds())
      : parent.window;
    unique = parent.unique && dimension.equals(SITE);
    idPattern = null;
    maxIdLength = null;
    anonymousReads = parent.anonymousReads;
    perClientPerMinute = 0;
    perClientBurst = parent.perClientBurst;
    idsPerClientPerHour = 0;
    perPagePerMinute = 0;
    perPageBurst = parent.perPageBurst;
    newIdsPerHour = 0;
    companions = List.of();
  }

  /** The companions of this windowed namespace, in {@link #COMPANIONS}' order; none for a plain one or a companion. */
  public List<NamespaceOptions> companions() {
    return companions;
  }

  /** This windowed namespace's companion {@code dimension} (one of {@link #COMPANIONS}). */
  public NamespaceOptions companion(String dimension) {
    return companions.get(COMPANIONS.indexOf(dimension));
  }

  /** Whether the gateway writes this namespace from another's beacons ({@code pageviews~sources}). */
  public boolean isCompanion() {
    return parent != null;
  }

  /** The windowed namespace a companion counts the beacons of; null for a declared namespace. */
  public NamespaceOptions getParent() {
    return parent;
  }


  /** What a namespace name may be, for the messages that refuse one. */
  static final String NAME_RULE = "a namespace name must be 1-64 of a-z 0-9 _ . - and start with a letter or digit";

  static boolean isValidName(String name) {
    return name != null && name.matches("[a-z0-9][a-z0-9_.-]{0,63}");
  }

  static NamespaceOptions from(String name, ConfigSection section) {
    if (!isValidName(name)) {
      throw new ConfigException("namespaces." + name, NAME_RULE);
    }
    return new NamespaceOptions(name, section);
  }

  /** The namespace {@code name} from a mapping as the file's {@code namespaces.<name>} would hold it (tests, tools). */
  public static NamespaceOptions fromJson(String name, JsonObject json) {
    return ConfigSection.read(json, "namespaces." + name, section -> from(name, section));
  }

  public String getName() {
    return name;
  }

  /** About the number of concurrent writers (coalescers times replicas), not the request concurrency. */
  public int getSlots() {
    return slots;
  }

  public boolean isPublic() {
    return isPublic;
  }

  /** Beacons from crawlers and headless browsers are answered 204 and not counted; on by default for public namespaces. */
  public boolean isDropBots() {
    return dropBots;
  }

  /** Beacons sent with {@code DNT: 1} are answered 204 and not counted. */
  public boolean isHonorDoNotTrack() {
    return honorDoNotTrack;
  }

  /** Beacons sent with {@code Sec-GPC: 1} are answered 204 and not counted. */
  public boolean isHonorGlobalPrivacyControl() {
    return honorGlobalPrivacyControl;
  }

  public WindowOptions getWindow() {
    return window;
  }

  public boolean isWindowed() {
    return window != null;
  }

  /** Beacons also feed a sketch of distinct visitors per counter and bucket. */
  public boolean isUnique() {
    return unique;
  }

  /** This namespace's own id pattern, or null for {@code limits.idPattern}. */
  public Pattern getIdPattern() {
    return idPattern;
  }

  /** This namespace's own longest id, or null for {@code limits.maxIdLength}. */
  public Integer getMaxIdLength() {
    return maxIdLength;
  }

  /** With auth on, reads of this namespace need no token. */
  public boolean isAnonymousReads() {
    return anonymousReads;
  }

  /** Beacons one client address may send per minute, sustained (a flood ceiling); 0: none. */
  public int getPerClientPerMinute() {
    return perClientPerMinute;
  }

  public int getPerClientBurst() {
    return perClientBurst;
  }

  /** New ids one client address may add per hour (its networks a share each); 0: no budget. */
  public int getIdsPerClientPerHour() {
    return idsPerClientPerHour;
  }

  /** Views of one id one client address may have counted per minute, sustained; 0: no limit. */
  public int getPerPagePerMinute() {
    return perPagePerMinute;
  }

  public int getPerPageBurst() {
    return perPageBurst;
  }

  /** New ids the namespace takes per hour from all its clients; 0: no budget. */
  public int getNewIdsPerHour() {
    return newIdsPerHour;
  }
}
