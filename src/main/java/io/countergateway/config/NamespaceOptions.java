package io.countergateway.config;

/** A declared record type: how many slot rows its counters spread over, and whether anonymous beacons may bump it. */
public class NamespaceOptions {
  public static final int DEFAULT_SLOTS = 16;

  private final String name;
  private int slots = DEFAULT_SLOTS;
  private boolean isPublic;
  /** Null for a plain namespace: one value per counter, no buckets. */
  private WindowOptions window;

  public NamespaceOptions(String name) {
    if (name == null || !name.matches("[a-z0-9][a-z0-9_.-]{0,63}")) {
      throw new ConfigException("namespaces." + name,
        "a namespace name must be 1-64 of a-z 0-9 _ . - and start with a letter or digit");
    }
    this.name = name;
  }

  static NamespaceOptions from(String name, ConfigSection section) {
    return new NamespaceOptions(name)
      .setSlots(section.intValue("slots", DEFAULT_SLOTS))
      .setPublic(section.boolValue("public", false))
      .setWindow(section.json().containsKey("window") ? WindowOptions.from(section.section("window")) : null);
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
}
