package io.countergateway.config;

import io.netty.util.NetUtil;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code http.trustedProxies}: the peers (load balancers, reverse proxies) whose {@code X-Forwarded-For} is believed.
 * Addresses are parsed as literals only ({@link NetUtil}), never resolved: a forwarded header is attacker-controlled
 * text, and looking it up in DNS on an event loop would block it.
 */
public final class TrustedProxies {
  public static final TrustedProxies NONE = new TrustedProxies(List.of());

  private record Block(byte[] network, int prefixBits) {
    boolean contains(byte[] address) {
      if (address.length != network.length) {
        return false;
      }
      int whole = prefixBits / 8;
      for (int i = 0; i < whole; i++) {
        if (address[i] != network[i]) {
          return false;
        }
      }
      int rest = prefixBits % 8;
      if (rest == 0) {
        return true;
      }
      int mask = (0xFF << (8 - rest)) & 0xFF;
      return (address[whole] & mask) == (network[whole] & mask);
    }
  }

  private final List<Block> blocks;

  private TrustedProxies(List<Block> blocks) {
    this.blocks = blocks;
  }

  public static TrustedProxies parse(String key, List<String> entries) {
    List<Block> blocks = new ArrayList<>();
    for (String entry : entries) {
      String[] parts = entry.trim().split("/", -1);
      byte[] address = parts.length > 2 ? null : NetUtil.createByteArrayFromIpAddressString(parts[0]);
      if (address == null) {
        throw new ConfigException(key, "'" + entry + "' is not an IP address or CIDR block (e.g. 10.0.0.0/8, fd00::/8)");
      }
      int prefix = address.length * 8;
      if (parts.length == 2) {
        try {
          prefix = Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
          prefix = -1;
        }
        if (prefix < 0 || prefix > address.length * 8) {
          throw new ConfigException(key, "'" + entry + "': the prefix length must be between 0 and " + address.length * 8);
        }
      }
      blocks.add(new Block(address, prefix));
    }
    return new TrustedProxies(List.copyOf(blocks));
  }

  public boolean isEmpty() {
    return blocks.isEmpty();
  }

  /** Whether {@code address} (a literal; anything else is not trusted) is one of the trusted proxies. */
  public boolean contains(String address) {
    if (blocks.isEmpty() || address == null) {
      return false;
    }
    byte[] bytes = NetUtil.createByteArrayFromIpAddressString(address.trim());
    if (bytes == null) {
      return false;
    }
    for (Block block : blocks) {
      if (block.contains(bytes)) {
        return true;
      }
    }
    return false;
  }
}
