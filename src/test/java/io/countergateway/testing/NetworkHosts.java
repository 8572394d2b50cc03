package io.countergateway.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Hosts on a private network, made of Linux network namespaces on this machine (iproute2 {@code ip netns}): each host
 * is a namespace with one veth link to a bridge in the root namespace, which holds {@link #GATEWAY_ADDRESS}, so this
 * JVM reaches every host and every host reaches every other. A process runs on a host through {@link #launcher}.
 * Faults are nftables rules inside a host's namespace that DROP packets (no RST, no ICMP: the peer learns nothing), so
 * a cut link looks like a cable pulled or a firewall gone silent, not a closed socket. Needs root, iproute2 and
 * nftables; {@link #unavailableBecause()} says why they cannot be made here.
 */
public final class NetworkHosts implements AutoCloseable {
  /** Loopback-free private range, used by nothing else on a test machine. */
  private static final String PREFIX = "10.77.0.";
  public static final String GATEWAY_ADDRESS = PREFIX + "1";
  private static final String BRIDGE = "cgnet-br";
  /** Names of namespaces and links start so, so a run cleans what an aborted run left. */
  private static final String NAME_PREFIX = "cgnet-";
  private static final String TABLE = "cgnet_faults";

  private final Map<String, String> addresses = new LinkedHashMap<>();

  private NetworkHosts() {
  }

  /** Null when hosts can be made here; otherwise the reason (not root, no {@code ip netns}, no nft). */
  public static String unavailableBecause() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return "network namespaces need root (running as " + System.getProperty("user.name") + ")";
    }
    Result nft = run(List.of("nft", "--version"));
    if (nft.exit != 0) {
      return "nft is missing (Debian package nftables): " + nft.output;
    }
    String probe = NAME_PREFIX + "probe";
    run(List.of("ip", "netns", "del", probe));
    Result add = run(List.of("ip", "netns", "add", probe));
    if (add.exit != 0) {
      return "ip netns add fails here: " + add.output;
    }
    Result rules = run(List.of("ip", "netns", "exec", probe, "nft", "add", "table", "inet", TABLE));
    run(List.of("ip", "netns", "del", probe));
    return rules.exit == 0 ? null : "nftables does not work in a network namespace here: " + rules.output;
  }

  /**
   * Hosts {@code names} (at most 7 characters each, for the links' names), addressed {@code 10.77.0.2}, {@code .3}… in order. Whatever an
   * earlier run left under the same names is removed first.
   */
  public static NetworkHosts create(List<String> names) {
    NetworkHosts hosts = new NetworkHosts();
    removeLeftovers();
    try {
      must(List.of("ip", "link", "add", BRIDGE, "type", "bridge"));
      must(List.of("ip", "addr", "add", GATEWAY_ADDRESS + "/24", "dev", BRIDGE));
      must(List.of("ip", "link", "set", BRIDGE, "up"));
      int next = 2;
      for (String name : names) {
        String namespace = NAME_PREFIX + name;
        String address = PREFIX + next++;
        must(List.of("ip", "netns", "add", namespace));
        hosts.addresses.put(name, address);
        String outside = NAME_PREFIX + name + "-h";
        String inside = NAME_PREFIX + name + "-n";
        must(List.of("ip", "link", "add", outside, "type", "veth", "peer", "name", inside));
        must(List.of("ip", "link", "set", inside, "netns", namespace));
        must(List.of("ip", "link", "set", outside, "master", BRIDGE, "up"));
        must(List.of("ip", "-n", namespace, "addr", "add", address + "/24", "dev", inside));
        must(List.of("ip", "-n", namespace, "link", "set", inside, "up"));
        must(List.of("ip", "-n", namespace, "link", "set", "lo", "up"));
        hosts.inside(name, "nft", "add", "table", "inet", TABLE);
        for (String hook : List.of("input", "output")) {
          hosts.inside(name, "nft", "add", "chain", "inet", TABLE, hook,
            "{ type filter hook " + hook + " priority 0; policy accept; }");
        }
      }
      return hosts;
    } catch (RuntimeException e) {
      hosts.close();
      throw e;
    }
  }

  public String address(String host) {
    String address = addresses.get(host);
    if (address == null) {
      throw new IllegalArgumentException("no host " + host);
    }
    return address;
  }

  /** The command prefix that runs a program on {@code host}: {@code ip netns exec <namespace>}. */
  public List<String> launcher(String host) {
    address(host);
    return List.of("ip", "netns", "exec", NAME_PREFIX + host);
  }

  /** Every packet between {@code host} and {@code peer} dropped silently, both ways, on {@code host}'s side. */
  public void cut(String host, String peer) {
    String other = address(peer);
    inside(host, "nft", "add", "rule", "inet", TABLE, "input", "ip", "saddr", other, "drop");
    inside(host, "nft", "add", "rule", "inet", TABLE, "output", "ip", "daddr", other, "drop");
  }

  /** Every TCP packet to or from {@code ports} (either end) dropped silently on {@code host}, whoever the peer. */
  public void cutPorts(String host, List<Integer> ports) {
    String set = "{ " + ports.stream().map(String::valueOf).collect(Collectors.joining(", ")) + " }";
    for (String hook : List.of("input", "output")) {
      inside(host, "nft", "add", "rule", "inet", TABLE, hook, "tcp", "dport", set, "drop");
      inside(host, "nft", "add", "rule", "inet", TABLE, hook, "tcp", "sport", set, "drop");
    }
  }

  /** Removes every rule {@link #cut} and {@link #cutPorts} added on {@code host}. */
  public void heal(String host) {
    for (String hook : List.of("input", "output")) {
      inside(host, "nft", "flush", "chain", "inet", TABLE, hook);
    }
  }

  private void inside(String host, String... command) {
    List<String> full = new ArrayList<>(launcher(host));
    full.addAll(List.of(command));
    must(full);
  }

  /** Deletes the namespaces (their links go with them) and the bridge. */
  @Override
  public void close() {
    addresses.keySet().forEach(name -> run(List.of("ip", "netns", "del", NAME_PREFIX + name)));
    addresses.clear();
    run(List.of("ip", "link", "del", BRIDGE));
  }

  private static void removeLeftovers() {
    Result namespaces = run(List.of("ip", "netns", "list"));
    for (String line : namespaces.output.split("\n")) {
      String name = line.split(" ")[0].trim();
      if (name.startsWith(NAME_PREFIX)) {
        run(List.of("ip", "netns", "del", name));
      }
    }
    run(List.of("ip", "link", "del", BRIDGE));
  }

  private static void must(List<String> command) {
    Result result = run(command);
    if (result.exit != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed (" + result.exit + "): " + result.output);
    }
  }

  private record Result(int exit, String output) {
  }

  private static Result run(List<String> command) {
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return new Result(-1, "timed out");
      }
      return new Result(process.exitValue(), output);
    } catch (IOException e) {
      return new Result(-1, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UncheckedIOException(new IOException(e));
    }
  }
}
