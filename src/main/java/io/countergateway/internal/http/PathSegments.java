package io.countergateway.internal.http;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The percent-decoding of one segment of a beacon's path, done exactly once, by the hot path and the router alike:
 * each {@code %XX} is a byte, the bytes must be UTF-8; a {@code %} not followed by two hex digits is a literal
 * {@code %} (a page's path may hold one, and a view is not refused for it); {@code +} stays {@code +}.
 */
final class PathSegments {
  private PathSegments() {
  }

  /** {@code raw} decoded; null when its bytes are not UTF-8 (the beacon then counts under {@code (invalid)}). */
  static String decode(String raw) {
    return decode(raw, CodingErrorAction.REPORT);
  }

  /** {@code raw} decoded, bytes that are not UTF-8 read as U+FFFD: for names shown, not counted. */
  static String decodeLeniently(String raw) {
    return decode(raw, CodingErrorAction.REPLACE);
  }

  private static String decode(String raw, CodingErrorAction malformed) {
    int percent = raw.indexOf('%');
    if (percent < 0) {
      return raw;
    }
    // at most 3 bytes of UTF-8 per char of the raw text (a surrogate pair: 4 for 2)
    byte[] bytes = new byte[raw.length() * 3];
    int length = 0;
    boolean ascii = true;
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%' && isEscape(raw, i)) {
        byte b = (byte) (hex(raw.charAt(i + 1)) << 4 | hex(raw.charAt(i + 2)));
        bytes[length++] = b;
        ascii &= b >= 0;
        i += 2;
      } else if (c < 0x80) {
        bytes[length++] = (byte) c;
      } else {
        int end = Character.isHighSurrogate(c) && i + 1 < raw.length() ? i + 2 : i + 1;
        byte[] utf8 = raw.substring(i, end).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(utf8, 0, bytes, length, utf8.length);
        length += utf8.length;
        ascii = false;
        i = end - 1;
      }
    }
    if (ascii) {
      // the usual beacon id (%2Fdocs%2Fstart): no decoder needed
      return new String(bytes, 0, length, StandardCharsets.ISO_8859_1);
    }
    CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder().onMalformedInput(malformed)
      .onUnmappableCharacter(malformed);
    try {
      return utf8.decode(ByteBuffer.wrap(bytes, 0, length)).toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  /** Whether {@code raw} holds a {@code %} not followed by two hex digits: the router would refuse it (400). */
  static boolean hasStrayPercent(String raw) {
    for (int i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', i + 1)) {
      if (!isEscape(raw, i)) {
        return true;
      }
    }
    return false;
  }

  /** {@code raw} with each stray {@code %} written {@code %25}: what decodes to the same text with any decoder. */
  static String escapeStrayPercents(String raw) {
    StringBuilder escaped = new StringBuilder(raw.length() + 8);
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      escaped.append(c);
      if (c == '%' && !isEscape(raw, i)) {
        escaped.append("25");
      }
    }
    return escaped.toString();
  }

  /** Whether the {@code %} at {@code i} starts a {@code %XX}. */
  private static boolean isEscape(String raw, int i) {
    return i + 2 < raw.length() && hex(raw.charAt(i + 1)) >= 0 && hex(raw.charAt(i + 2)) >= 0;
  }

  private static int hex(char c) {
    return Character.digit(c, 16) >= 0 && c < 0x80 ? Character.digit(c, 16) : -1;
  }
}
