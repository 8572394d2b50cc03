package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.HIGH;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;

/**
 * Bearer tokens and what each may do. Each entry is {@code <token>:<right>+<right>…}; rights are {@code read}
 * (reads), {@code write} (increments and batches, and reads), {@code admin} (resets, and reads) and {@code beacon}
 * (nothing else: a token safe to ship to browsers). Entries come from {@code auth.tokens} (a list, or a comma-separated string such as an environment
 * variable gives) and from {@code auth.tokensFile} (one entry per line). No tokens: no authentication, which only a
 * loopback bind (a sidecar) or an explicit {@code auth.anonymous: true} may have ({@link GatewayConfig}); a tokens file
 * that yields no token refuses the start, so an empty Secret never turns authentication off. The file is read again
 * when it changes ({@link #reloaded}). Only SHA-256 digests of the tokens are kept, and the tokens are never logged.
 */
public final class AuthOptions {
  /** {@code write} and {@code admin} imply {@code read}. */
  public enum Right { READ, WRITE, ADMIN, BEACON }

  static final ConfigDef KEYS = ConfigDef.section("auth");
  public static final ConfigKey<List<String>> TOKENS = KEYS.define("tokens", HIGH, LIST, List.of(), any(),
    "`<token>:<right>+<right>` entries (rights `read`, `write`, `admin`, `beacon`; tokens of 16+ characters); none = no auth");
  public static final ConfigKey<String> TOKENS_FILE = KEYS.defineOptional("tokensFile", HIGH, STRING, any(),
    "a file of more such entries, one per line (a mounted secret); must yield a token; read again when it changes");
  public static final ConfigKey<Duration> TOKENS_FILE_CHECK_INTERVAL = KEYS.define("tokensFileCheckInterval", LOW, DURATION,
    Duration.ofSeconds(5), between(Duration.ofMillis(100), Duration.ofHours(1)), "how often the tokens file is read and "
      + "its content compared with the last read; a changed file that yields no valid token is refused (the old tokens "
      + "stay, an error is logged)")
    .formerly("tokensFileCheckMs", ChronoUnit.MILLIS);
  public static final ConfigKey<Boolean> ANONYMOUS = KEYS.define("anonymous", MEDIUM, BOOLEAN, false, any(),
    "serve a non-loopback `http.host` without tokens (every route open to whoever reaches the port; a warning is logged at start)");
  public static final ConfigKey<Integer> PER_TOKEN_PER_SECOND = KEYS.define("perTokenPerSecond", MEDIUM, INT, 0,
    between(0, 100_000_000), "requests one token may make to the JSON write routes per second (429 + Retry-After above; 0 = no limit)");
  public static final ConfigKey<Integer> PER_TOKEN_BURST = KEYS.define("perTokenBurst", LOW, INT, 1_000,
    between(1, 100_000_000), "requests one token may make at once before `perTokenPerSecond` applies");

  private final Map<String, Set<Right>> rightsByDigest;
  private final List<String> configuredEntries;
  private final String tokensFile;
  private final int tokensFileCheckMs;
  private final boolean anonymous;
  private final int perTokenPerSecond;
  private final int perTokenBurst;
  private final String tokensKey;
  private final String tokensFileKey;

  private AuthOptions(ConfigSection section, Map<String, Set<Right>> rightsByDigest, List<String> configuredEntries,
                      String tokensFile) {
    this.rightsByDigest = Map.copyOf(rightsByDigest);
    this.configuredEntries = List.copyOf(configuredEntries);
    this.tokensFile = tokensFile;
    this.tokensFileCheckMs = (int) section.get(TOKENS_FILE_CHECK_INTERVAL).toMillis();
    this.anonymous = section.get(ANONYMOUS);
    this.perTokenPerSecond = section.get(PER_TOKEN_PER_SECOND);
    this.perTokenBurst = section.get(PER_TOKEN_BURST);
    this.tokensKey = section.key(TOKENS);
    this.tokensFileKey = section.key(TOKENS_FILE);
  }

  private AuthOptions(AuthOptions options, Map<String, Set<Right>> rightsByDigest) {
    this.rightsByDigest = Map.copyOf(rightsByDigest);
    this.configuredEntries = options.configuredEntries;
    this.tokensFile = options.tokensFile;
    this.tokensFileCheckMs = options.tokensFileCheckMs;
    this.anonymous = options.anonymous;
    this.perTokenPerSecond = options.perTokenPerSecond;
    this.perTokenBurst = options.perTokenBurst;
    this.tokensKey = options.tokensKey;
    this.tokensFileKey = options.tokensFileKey;
  }

  static AuthOptions from(ConfigSection section) {
    List<String> configured = section.get(TOKENS);
    String file = section.get(TOKENS_FILE);
    Map<String, Set<Right>> rightsByDigest = new HashMap<>();
    addEntries(rightsByDigest, section.key(TOKENS), configured);
    if (file == null || file.isBlank()) {
      file = null;
    } else {
      try {
        addFileEntries(rightsByDigest, section.key(TOKENS_FILE), file, Files.readString(Path.of(file)));
      } catch (IOException e) {
        throw new ConfigException(section.key(TOKENS_FILE), "cannot read " + file + ": " + e.getMessage());
      }
    }
    AuthOptions auth = new AuthOptions(section, rightsByDigest, configured, file);
    if (auth.anonymous && auth.isEnabled()) {
      throw new ConfigException(section.key(ANONYMOUS), "must not be true while tokens are set ("
        + section.key(TOKENS) + ", " + section.key(TOKENS_FILE) + "): choose one");
    }
    return auth;
  }

  /**
   * These options with the tokens file's new {@code content} in place of what it held: the configured tokens and
   * every entry of the file. Throws a {@link ConfigException} naming the key when an entry is malformed or the file
   * yields no token, so a rotation that went wrong is refused whole and the caller keeps the tokens it has.
   */
  public AuthOptions reloaded(String content) {
    Map<String, Set<Right>> rightsByDigest = new HashMap<>();
    addEntries(rightsByDigest, tokensKey, configuredEntries);
    addFileEntries(rightsByDigest, tokensFileKey, tokensFile, content);
    return new AuthOptions(this, rightsByDigest);
  }

  private static void addEntries(Map<String, Set<Right>> rightsByDigest, String key, List<String> entries) {
    for (int i = 0; i < entries.size(); i++) {
      addEntry(rightsByDigest, key, key + "[" + i + "]", entries.get(i));
    }
  }

  /** A file named as a tokens source that holds no token (an empty Secret) must not start a gateway without auth. */
  private static void addFileEntries(Map<String, Set<Right>> rightsByDigest, String fileKey, String file, String content) {
    List<String> lines = content.lines().map(String::strip).filter(line -> !line.isEmpty() && !line.startsWith("#"))
      .toList();
    if (lines.isEmpty()) {
      throw new ConfigException(fileKey, file + " holds no token; remove the key (or set it to \"\") for no authentication");
    }
    for (int i = 0; i < lines.size(); i++) {
      // the line, not the token: an error must not print a secret
      addEntry(rightsByDigest, fileKey, fileKey + " (" + file + " entry " + (i + 1) + ")", lines.get(i));
    }
  }

  private static void addEntry(Map<String, Set<Right>> rightsByDigest, String tokensKey, String key, String entry) {
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

  /** Whether {@code other} accepts exactly the tokens these do, with the same rights. */
  public boolean sameTokens(AuthOptions other) {
    return rightsByDigest.equals(other.rightsByDigest);
  }

  public int tokenCount() {
    return rightsByDigest.size();
  }

  /** Whether a non-loopback bind without tokens was asked for explicitly. */
  public boolean isAnonymous() {
    return anonymous;
  }

  /** The tokens file, null when none is configured. */
  public String getTokensFile() {
    return tokensFile;
  }

  public int getTokensFileCheckMs() {
    return tokensFileCheckMs;
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
