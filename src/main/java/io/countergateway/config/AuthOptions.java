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

import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;

/**
 * Bearer tokens and what each may do. Each entry is {@code <token>:<right>+<right>…}; rights are {@code write}
 * (increments and batches), {@code admin} (resets) and {@code beacon} (nothing else: a token safe to ship to
 * browsers). Entries come from {@code auth.tokens} (a list, or a comma-separated string such as an environment
 * variable gives) and from {@code auth.tokensFile} (one entry per line). No tokens: no authentication (sidecar
 * on loopback). Only SHA-256 digests of the tokens are kept, and the tokens are never logged.
 */
public final class AuthOptions {
  public enum Right { WRITE, ADMIN, BEACON }

  static final ConfigDef KEYS = ConfigDef.section("auth");
  public static final ConfigKey<List<String>> TOKENS = KEYS.define("tokens", LIST, List.of(), any(),
    "`<token>:<right>+<right>` entries (rights `write`, `admin`, `beacon`; tokens of 16+ characters); none = no auth");
  public static final ConfigKey<String> TOKENS_FILE = KEYS.defineOptional("tokensFile", STRING, any(),
    "a file of more such entries, one per line (a mounted secret)");

  private final Map<String, Set<Right>> rightsByDigest;

  private AuthOptions(Map<String, Set<Right>> rightsByDigest) {
    this.rightsByDigest = Map.copyOf(rightsByDigest);
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
    return new AuthOptions(rightsByDigest);
  }

  private static void addEntry(Map<String, Set<Right>> rightsByDigest, String tokensKey, int index, String entry) {
    String key = tokensKey + "[" + index + "]";
    int colon = entry.lastIndexOf(':');
    if (colon <= 0 || colon == entry.length() - 1) {
      throw new ConfigException(key, "must be <token>:<right>[+<right>…] with rights write, admin, beacon");
    }
    Set<Right> rights = EnumSet.noneOf(Right.class);
    for (String right : entry.substring(colon + 1).split("\\+")) {
      try {
        rights.add(Right.valueOf(right.strip().toUpperCase()));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(key, "unknown right '" + right.strip() + "' (use write, admin, beacon)");
      }
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

  private static String digest(String token) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
