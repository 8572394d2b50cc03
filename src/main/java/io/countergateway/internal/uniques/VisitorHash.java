package io.countergateway.internal.uniques;

import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HashMap;
import java.util.Map;

/**
 * One UTC day's visitor hash: the first 8 bytes of HMAC-SHA256(salt of the day, IP address \0 User-Agent \0 record
 * type), as a long. A beacon's visitor is encoded once ({@link #visitor}) and hashed for each sketch it joins (its
 * page's and its site's), the record type's bytes appended from a cache: the same bytes, so the same values, as hashing
 * the whole string for each sketch, without encoding the address and the User-Agent twice or allocating per digest.
 * Confined to one event loop (a {@link Mac} holds state between its calls).
 */
final class VisitorHash {
  /** Record types whose bytes are kept: the unique namespaces and their site companions are far fewer. */
  private static final int MAX_TYPES = 256;
  private static final int DIGEST_BYTES = 32;

  private final Mac mac;
  private final byte[] digest = new byte[DIGEST_BYTES];
  private final Map<String, byte[]> typeBytes = new HashMap<>();

  VisitorHash(byte[] salt) {
    try {
      mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(salt, "HmacSHA256"));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }

  /** The visitor's part of the hashed bytes: its address and User-Agent (none: empty), each followed by \0, in UTF-8. */
  static byte[] visitor(String address, String userAgent) {
    return (address + '\0' + (userAgent == null ? "" : userAgent) + '\0').getBytes(StandardCharsets.UTF_8);
  }

  /** The value of {@code visitor} (from {@link #visitor}) in the sketches of record type {@code type}. */
  long of(byte[] visitor, String type) {
    mac.update(visitor);
    mac.update(bytesOf(type));
    try {
      mac.doFinal(digest, 0);
    } catch (ShortBufferException e) {
      throw new IllegalStateException("an HMAC-SHA256 digest is 32 bytes", e);
    }
    long value = 0;
    for (int i = 0; i < Long.BYTES; i++) {
      value = (value << 8) | (digest[i] & 0xFF);
    }
    return value;
  }

  private byte[] bytesOf(String type) {
    byte[] bytes = typeBytes.get(type);
    if (bytes == null) {
      bytes = type.getBytes(StandardCharsets.UTF_8);
      if (typeBytes.size() < MAX_TYPES) {
        typeBytes.put(type, bytes);
      }
    }
    return bytes;
  }
}
