package io.countergateway.config;

/** How reads are served. */
public class ReadOptions {
  public static final int DEFAULT_INSTANCES = 1;
  public static final int DEFAULT_CACHE_MILLIS = 0;

  private int instances = DEFAULT_INSTANCES;
  private int cacheMillis = DEFAULT_CACHE_MILLIS;

  static ReadOptions from(ConfigSection section) {
    return new ReadOptions()
      .setInstances(section.intValue("instances", DEFAULT_INSTANCES))
      .setCacheMillis(section.intValue("cacheMillis", DEFAULT_CACHE_MILLIS));
  }

  public int getInstances() {
    return instances;
  }

  public ReadOptions setInstances(int instances) {
    this.instances = Checks.range("reads.instances", instances, 1, 64);
    return this;
  }

  public int getCacheMillis() {
    return cacheMillis;
  }

  /** A read may be served from a value this many milliseconds old; 0 always asks the database. */
  public ReadOptions setCacheMillis(int cacheMillis) {
    this.cacheMillis = Checks.range("reads.cacheMillis", cacheMillis, 0, 3_600_000);
    return this;
  }
}
