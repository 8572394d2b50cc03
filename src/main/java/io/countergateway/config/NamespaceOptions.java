package io.countergateway.config;

/** A declared record type: how many slot rows its counters spread over, and whether anonymous beacons may bump it. */
public class NamespaceOptions {
  public static final int DEFAULT_SLOTS = 16;

  private final String name;
  private int slots = DEFAULT_SLOTS;
  private boolean isPublic;
  private Boolean dropBots;
  private boolean honorDoNotTrack;
  private boolean honorGlobalPrivacyControl;
  /** Null for a plain namespace: one value per counter, no buckets. */
  private WindowOptions window;
  private boolean unique;

  public NamespaceOptions(String name) {
    if (name == null || !name.matches("[a-z0-9][a-z0-9_.-]{0,63}")) {
      throw new ConfigException("namespaces." + name,
        "a namespace name must be 1-64 of a-z 0-9 _ . - and start with a letter or digit");
    }
    this.name = name;
  }

  static NamespaceOptions from(String name, ConfigSection section) {
    ConfigSection beacon = section.section("beacon");
    boolean isPublic = section.boolValue("public", false);
    NamespaceOptions namespace = new NamespaceOptions(name)
      .setSlots(section.intValue("slots", DEFAULT_SLOTS))
      .setPublic(isPublic)
      .setDropBots(beacon.boolValue("dropBots", isPublic))
      .setHonorDoNotTrack(beacon.boolValue("honorDoNotTrack", false))
      .setHonorGlobalPrivacyControl(beacon.boolValue("honorGlobalPrivacyControl", false))
      .setWindow(section.json().containsKey("window") ? WindowOptions.from(section.section("window")) : null);
    return namespace.setUnique(section.boolValue("unique", false));
  }

  public String getName() {
    return name;
  }

  public int getSlots() {
    return slots;
  }

  /** About the number of concurrent writers (coalescers times replicas), not the request concurrency. */
  public NamespaceOptions setSlots(int slots) {
    this.slots = Checks.range("namespaces." + name + ".slots", slots, 1, 1024);
    return this;
  }

  public boolean isPublic() {
    return isPublic;
  }

  public NamespaceOptions setPublic(boolean isPublic) {
    this.isPublic = isPublic;
    return this;
  }

  /** Beacons from crawlers and headless browsers are answered 204 and not counted; on by default for public namespaces. */
  public boolean isDropBots() {
    return dropBots != null ? dropBots : isPublic;
  }

  public NamespaceOptions setDropBots(boolean dropBots) {
    this.dropBots = dropBots;
    return this;
  }

  /** Beacons sent with {@code DNT: 1} are answered 204 and not counted. */
  public boolean isHonorDoNotTrack() {
    return honorDoNotTrack;
  }

  public NamespaceOptions setHonorDoNotTrack(boolean honorDoNotTrack) {
    this.honorDoNotTrack = honorDoNotTrack;
    return this;
  }

  /** Beacons sent with {@code Sec-GPC: 1} are answered 204 and not counted. */
  public boolean isHonorGlobalPrivacyControl() {
    return honorGlobalPrivacyControl;
  }

  public NamespaceOptions setHonorGlobalPrivacyControl(boolean honorGlobalPrivacyControl) {
    this.honorGlobalPrivacyControl = honorGlobalPrivacyControl;
    return this;
  }

  public WindowOptions getWindow() {
    return window;
  }

  public boolean isWindowed() {
    return window != null;
  }

  public NamespaceOptions setWindow(WindowOptions window) {
    this.window = window;
    return this;
  }

  /** Beacons also feed a sketch of distinct visitors per counter and bucket (set after the window and public). */
  public boolean isUnique() {
    return unique;
  }

  public NamespaceOptions setUnique(boolean unique) {
    if (unique && window == null) {
      throw new ConfigException("namespaces." + name + ".unique", "unique visitors are counted per bucket: only a "
        + "windowed namespace (namespaces." + name + ".window) may set unique: true");
    }
    if (unique && !isPublic) {
      throw new ConfigException("namespaces." + name + ".unique", "unique visitors are counted from beacons: only a "
        + "public namespace (namespaces." + name + ".public: true) may set unique: true");
    }
    this.unique = unique;
    return this;
  }
}
