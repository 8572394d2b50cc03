package io.countergateway.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/**
 * Bearer tokens and what each may do. Each entry is {@code <token>:<right>+<right>…}; rights are {@code read}
 * (reads), {@code write} (increments and batches, and reads), {@code admin} (resets, and reads) and {@code beacon}
 * (nothing else: a token safe to ship to browsers). Entries come from {@code auth.tokens} (a list, or a comma-separated string such as an environment
 * variable gives) and from {@code auth.tokensFile} (one entry per line). No tokens: no authentication (sidecar
 * on loopback). Only SHA-256 digests of the tokens are kept, and the tokens are never logged.
 */
public final class AuthOptions {
  /** {@code write} and {@code admin} imply {@code read}. */
  public enum Right { READ, WRITE, ADMIN, BEACON }

  static final ConfigDef KEYS = ConfigDef.section("auth");
  public static final ConfigKey<List<String>> TOKENS = KEYS.define("tokens", LIST, List.of(), any(),
    "`<token>:<right>+<right>` entries (rights `read`, `write`, `admin`, `beacon`; tokens of 16+ characters); none = no auth");
  public static final ConfigKey<String> TOKENS_FILE = KEYS.defineOptional("tokensFile", STRING, any(),
    "a file of more such entries, one per line (a mounted secret)");
  public static final ConfigKey<Integer> PER_TOKEN_PER_SECOND = KEYS.define("perTokenPerSecond", INT, 0,
    between(0, 100_000_000), "requests one token may make to the JSON write routes per second (429 + Retry-After above; 0 = no limit)");
  public static final ConfigKey<Integer> PER_TOKEN_BURST = KEYS.define("perTokenBurst", INT, 1_000,
    between(1, 100_000_000), "requests one token may make at once before `perTokenPerSecond` applies");

  private final Map<String, Set<Right>> rightsByDigest;
  private final int perTokenPerSecond;
  private final int perTokenBurst;

  private AuthOptions(Map<String, Set<Right>> rightsByDigest, int perTokenPerSecond, int perTokenBurst) {
    this.rightsByDigest = Map.copyOf(rightsByDigest);
    this.perTokenPerSecond = perTokenPerSecond;
    this.perTokenBurst = perTokenBurst;
  }

  static AuthOptions from(ConfigSection section) {
    List<String> entries = new ArrayList<>(section.get(TOKENS));
    String file = section.get(TOKENS_FILE);
    if (file != null && !file.isBlank()) {
      try {
        Files.readAllLines(Path.of(file)).stream().map(String::strip)
          .filter(line -> !line.isEmpty() && !line.startsWith("#")).forEach(entries::add);
      } catch (IOException e) {
        throw new ConfigException(section.key(TOKENS_FILE), "cannot read " + file + ": " + e.getMessage());
      }
    }
    Map<String, Set<Right>> rightsByDigest = new HashMap<>();
    for (int i = 0; i < entries.size(); i++) {
      addEntry(rightsByDigest, section.key(TOKENS), i, entries.get(i));
    }
    return new AuthOptions(rightsByDigest, section.get(PER_TOKEN_PER_SECOND), section.get(PER_TOKEN_BURST));
  }

  private static void addEntry(Map<String, Set<Right>> rightsByDigest, String tokensKey, int index, String entry) {
    String key = tokensKey + "[" + index + "]";
    int colon = entry.lastIndexOf(':');
    if (colon <= 0 || colon == entry.length() - 1) {
      throw new ConfigException(key, "must be <token>:<right>[+<right>…] with rights read, write, admin, beacon");
    }
    Set<Right> rights = EnumSet.noneOf(Right.class);
    for (String right : entry.substring(colon + 1).split("\\+")) {
      try {
        rights.add(Right.valueOf(right.strip().toUpperCase()));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(key, "unknown right '" + right.strip() + "' (use read, write, admin, beacon)");
      }
    }
    if (rights.contains(Right.WRITE) || rights.contains(Right.ADMIN)) {
      rights.add(Right.READ);
    }
    String token = entry.substring(0, colon);
    if (token.length() < 16) {
      throw new ConfigException(tokensKey, "a token must be at least 16 characters long");
    }
    rightsByDigest.put(digest(token), Collections.unmodifiableSet(rights));
  }

  public boolean isEnabled() {
    return !rightsByDigest.isEmpty();
  }

  /** The rights of a presented token, or null for an unknown token. Digests make the lookup time independent of the token. */
  public Set<Right> rightsOf(String token) {
    return rightsByDigest.get(digest(token));
  }

  /** The token's digest (what limits and logs may name it by), or null for an unknown token. */
  public String knownDigest(String token) {
    String digest = digest(token);
    return rightsByDigest.containsKey(digest) ? digest : null;
  }

  /** Requests one token may make to the JSON write routes per second; 0: no limit. */
  public int getPerTokenPerSecond() {
    return perTokenPerSecond;
  }

  public int getPerTokenBurst() {
    return perTokenBurst;
  }

  private static String digest(String token) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
