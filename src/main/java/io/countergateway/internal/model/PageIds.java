package io.countergateway.internal.model;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.Normalizer;
import java.util.HexFormat;

/**
 * A page's path as the id of its beacon counter: any Unicode text a site's paths hold (spaces, {@code ()}, {@code ;},
 * {@code '}, {@code %}, letters of any script), compared in NFC so that one page typed two ways is one counter.
 * Refused, so counted under the namespace's {@code (invalid)} id: no text at all (malformed UTF-8), control characters
 * (nothing a browser shows in an address), and more than {@link #MAX_CHARS} characters. A path longer than the stored
 * column is shortened deterministically: its first characters, {@code …}, and 16 hex digits of the SHA-256 of the
 * whole path, so the same path always lands on the same counter and two long paths sharing a prefix stay apart
 * (a collision needs 2<sup>32</sup> distinct long paths of one prefix).
 */
public final class PageIds {
  /** Longer paths are refused: no site serves them, and the request line bounds them well before (414). */
  public static final int MAX_CHARS = 8_192;
  /** The hex digits of the SHA-256 a shortened id ends with. */
  static final int HASH_DIGITS = 16;
  static final char ELLIPSIS = '\u2026';

  private PageIds() {
  }

  /**
   * The id {@code path} is counted under, at most {@code storedChars} characters; null when it cannot be one.
   * {@code path} is the decoded text, null when the bytes sent were not UTF-8.
   */
  public static String of(String path, int storedChars) {
    String text = text(path);
    return text == null ? null : fit(text, storedChars);
  }

  /** {@code path} in NFC, or null when it cannot be an id (see the class). */
  public static String text(String path) {
    if (path == null || path.isEmpty() || path.length() > MAX_CHARS) {
      return null;
    }
    boolean ascii = true;
    for (int i = 0; i < path.length(); i++) {
      char c = path.charAt(i);
      if (Character.isISOControl(c) || Character.isSurrogate(c) && !pairedSurrogate(path, i)) {
        return null;
      }
      ascii &= c < 0x80;
    }
    return ascii || Normalizer.isNormalized(path, Normalizer.Form.NFC) ? path
      : Normalizer.normalize(path, Normalizer.Form.NFC);
  }

  /** {@code text} (already {@link #text}) as stored: itself, or shortened when longer than {@code storedChars}. */
  public static String fit(String text, int storedChars) {
    return text.length() <= storedChars ? text : shortened(text, storedChars);
  }

  private static boolean pairedSurrogate(String text, int i) {
    char c = text.charAt(i);
    return Character.isHighSurrogate(c) ? i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))
      : i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
  }

  /** The first characters of {@code id}, never half a surrogate pair, then {@code …} and the hash. */
  static String shortened(String id, int storedChars) {
    String hash = HexFormat.of().formatHex(sha256(id), 0, HASH_DIGITS / 2);
    if (storedChars <= HASH_DIGITS) {
      return hash.substring(0, storedChars);
    }
    int prefix = storedChars - HASH_DIGITS - 1;
    if (prefix > 0 && Character.isHighSurrogate(id.charAt(prefix - 1))) {
      prefix--;
    }
    return id.substring(0, prefix) + ELLIPSIS + hash;
  }

  private static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }
}
