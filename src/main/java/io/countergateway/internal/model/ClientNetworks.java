package io.countergateway.internal.model;

import io.netty.util.NetUtil;

/**
 * What a per-client limit counts a client address under: the client, then the networks it belongs to, so that a
 * limit cannot be multiplied by the addresses one party holds. An IPv4 address is a client of its own and one of its
 * /24; an IPv6 address is a client by its /64 (one subscriber's prefix: 2^64 addresses to rotate through), one of its
 * /56 (what an ISP gives a household) and of its /48 (what a site, or anyone at a tunnel broker, gets for free). Each
 * level's budget is a number of clients' worth ({@link #share}): one for the client, {@code limits.clientsPerNetwork}
 * for the /24 or /48, a quarter of that for the /56.
 *
 * <p>The keys are short strings ({@code 203.0.113.7}, {@code 203.0.113.0/24}, {@code 2001:db8:1:2::/64},
 * {@code 2001:db8:1:200::/56}, {@code 2001:db8:1::/48}); an address that is not a literal (a forwarded header's text
 * that does not parse) is one client of no network. Literals only, never resolved: it is attacker-controlled text.
 */
public final class ClientNetworks {
  private ClientNetworks() {
  }

  /** The keys of {@code address}, the client first, the widest network last. */
  public static String[] of(String address) {
    byte[] bytes = literal(address);
    if (bytes == null) {
      return new String[] {address == null ? "" : address};
    }
    if (bytes.length == 4) {
      String client = address.indexOf(':') < 0 ? address : NetUtil.bytesToIpAddress(bytes);
      return new String[] {client, client.substring(0, client.lastIndexOf('.')) + ".0/24"};
    }
    return new String[] {prefix(bytes, 4, 0xFFFF, "/64"), prefix(bytes, 4, 0xFF00, "/56"), prefix(bytes, 3, 0xFFFF, "/48")};
  }

  /**
   * The bytes of {@code address} when it is an IP literal: 4 for IPv4 (an IPv4-mapped IPv6 address, {@code
   * ::ffff:203.0.113.7}, is the IPv4 client it maps), 16 for IPv6; null for anything else (null included).
   */
  public static byte[] literal(String address) {
    if (address == null || address.isEmpty()) {
      return null;
    }
    byte[] bytes = NetUtil.createByteArrayFromIpAddressString(address);
    if (bytes != null && bytes.length == 16 && isIpv4Mapped(bytes)) {
      return java.util.Arrays.copyOfRange(bytes, 12, 16);
    }
    return bytes;
  }

  /** The key of the client alone ({@code of(address)[0]}). */
  public static String client(String address) {
    return of(address)[0];
  }

  /**
   * How many clients' worth of a per-client budget level {@code level} of {@code levels} gets: 1 for the client,
   * {@code clientsPerNetwork} for the widest network, a quarter of it (at least 1) for one between (the IPv6 /56).
   */
  public static int share(int level, int levels, int clientsPerNetwork) {
    if (level == 0) {
      return 1;
    }
    return level == levels - 1 ? clientsPerNetwork : Math.max(1, clientsPerNetwork / 4);
  }

  private static boolean isIpv4Mapped(byte[] bytes) {
    for (int i = 0; i < 10; i++) {
      if (bytes[i] != 0) {
        return false;
      }
    }
    return (bytes[10] & 0xFF) == 0xFF && (bytes[11] & 0xFF) == 0xFF;
  }

  /** The first {@code groups} 16-bit groups, the last one masked with {@code lastMask}, as {@code a:b:c::/n}. */
  private static String prefix(byte[] bytes, int groups, int lastMask, String length) {
    StringBuilder key = new StringBuilder(24);
    for (int i = 0; i < groups; i++) {
      int group = ((bytes[2 * i] & 0xFF) << 8) | (bytes[2 * i + 1] & 0xFF);
      key.append(Integer.toHexString(i == groups - 1 ? group & lastMask : group)).append(':');
    }
    return key.append(':').append(length).toString();
  }
}
