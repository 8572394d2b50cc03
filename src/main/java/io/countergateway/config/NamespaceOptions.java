package io.countergateway.config;

import io.vertx.core.json.JsonObject;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/** A declared record type: how many slot rows its counters spread over, and whether anonymous beacons may bump it. */
public final class NamespaceOptions {
  static final ConfigDef KEYS = ConfigDef.section("namespaces.<name>");
  /** About the number of concurrent writers (coalescers times replicas), not the request concurrency. */
  public static final ConfigKey<Integer> SLOTS = KEYS.define("slots", INT, 16, between(1, 1024),
    "slot rows per counter; at least replicas × ingest verticles × (`batching.maxInFlight` + 1), see *Replica lanes*");
  public static final ConfigKey<Boolean> PUBLIC = KEYS.define("public", BOOLEAN, false, any(),
    "takes anonymous beacons (see *Beacons*)");
  /** On by default for public namespaces: they are the ones crawlers reach. */
  public static final ConfigKey<Boolean> DROP_BOTS = KEYS.defineDerived("beacon.dropBots", BOOLEAN, "= `public`", any(),
    "beacons from crawlers and headless browsers are answered 204 and not counted");
  public static final ConfigKey<Boolean> HONOR_DO_NOT_TRACK = KEYS.define("beacon.honorDoNotTrack", BOOLEAN, false, any(),
    "beacons sent with `DNT: 1` are answered 204 and not counted");
  public static final ConfigKey<Boolean> HONOR_GLOBAL_PRIVACY_CONTROL = KEYS.define("beacon.honorGlobalPrivacyControl",
    BOOLEAN, false, any(), "beacons sent with `Sec-GPC: 1` are answered 204 and not counted");
  public static final ConfigKey<Boolean> UNIQUE = KEYS.define("unique", BOOLEAN, false, any(),
    "also estimate distinct visitors per counter and bucket; public windowed namespaces only (see *Beacons*)");

  private final String name;
  private final int slots;
  private final boolean isPublic;
  private final boolean dropBots;
  private final boolean honorDoNotTrack;
  private final boolean honorGlobalPrivacyControl;
  /** Null for a plain namespace: one value per counter, no buckets. */
  private final WindowOptions window;
  private final boolean unique;

  private NamespaceOptions(String name, ConfigSection section) {
    this.name = name;
    slots = section.get(SLOTS);
    isPublic = section.get(PUBLIC);
    dropBots = section.get(DROP_BOTS, isPublic);
    honorDoNotTrack = section.get(HONOR_DO_NOT_TRACK);
    honorGlobalPrivacyControl = section.get(HONOR_GLOBAL_PRIVACY_CONTROL);
    window = section.json().containsKey("window") ? WindowOptions.from(section.section("window")) : null;
    unique = section.get(UNIQUE);
    if (unique && window == null) {
      throw new ConfigException(section.key(UNIQUE), "unique visitors are counted per bucket: only a "
        + "windowed namespace (" + section.key("window") + ") may set unique: true");
    }
    if (unique && !isPublic) {
      throw new ConfigException(section.key(UNIQUE), "unique visitors are counted from beacons: only a "
        + "public namespace (" + section.key(PUBLIC) + ": true) may set unique: true");
    }
  }

  static NamespaceOptions from(String name, ConfigSection section) {
    if (name == null || !name.matches("[a-z0-9][a-z0-9_.-]{0,63}")) {
      throw new ConfigException("namespaces." + name,
        "a namespace name must be 1-64 of a-z 0-9 _ . - and start with a letter or digit");
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
}
