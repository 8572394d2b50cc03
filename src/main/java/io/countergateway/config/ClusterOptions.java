package io.countergateway.config;

import java.util.List;

/**
 * The clustered event bus: gateways and the applications that send to them join one Hazelcast cluster, and
 * {@code counters.*} messages travel between their JVMs. Off by default: a gateway alone needs no cluster.
 */
public class ClusterOptions {
  public enum Join { TCP, KUBERNETES }

  public static final String DEFAULT_NAME = "counter-gateway";
  public static final String DEFAULT_HOST = "127.0.0.1";
  public static final int DEFAULT_PORT = 5701;
  public static final int DEFAULT_MEMBER_TIMEOUT_SECONDS = 10;

  private boolean enabled;
  private String name = DEFAULT_NAME;
  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;
  private int busPort;
  private List<String> members = List.of();
  private Join join = Join.TCP;
  private String kubernetesServiceDns = "";
  private String kubernetesServiceName = "";
  private String kubernetesNamespace = "";
  private int memberTimeoutSeconds = DEFAULT_MEMBER_TIMEOUT_SECONDS;

  static ClusterOptions from(ConfigSection section) {
    return new ClusterOptions()
      .setEnabled(section.boolValue("enabled", false))
      .setName(section.stringValue("name", DEFAULT_NAME))
      .setHost(section.stringValue("host", DEFAULT_HOST))
      .setPort(section.intValue("port", DEFAULT_PORT))
      .setBusPort(section.intValue("busPort", 0))
      .setMembers(section.stringList("members"))
      .setJoin(join(section.stringValue("join", "tcp")))
      .setKubernetesServiceDns(section.stringValue("kubernetesServiceDns", ""))
      .setKubernetesServiceName(section.stringValue("kubernetesServiceName", ""))
      .setKubernetesNamespace(section.stringValue("kubernetesNamespace", ""))
      .setMemberTimeoutSeconds(section.intValue("memberTimeoutSeconds", DEFAULT_MEMBER_TIMEOUT_SECONDS));
  }

  private static Join join(String value) {
    return switch (value.trim().toLowerCase()) {
      case "tcp" -> Join.TCP;
      case "kubernetes" -> Join.KUBERNETES;
      default -> throw new ConfigException("cluster.join", "must be tcp or kubernetes, got '" + value + "'");
    };
  }

  public boolean isEnabled() {
    return enabled;
  }

  public ClusterOptions setEnabled(boolean enabled) {
    this.enabled = enabled;
    return this;
  }

  public String getName() {
    return name;
  }

  /** Members only join a cluster of the same name, so two deployments on one network stay apart. */
  public ClusterOptions setName(String name) {
    this.name = Checks.notBlank("cluster.name", name);
    return this;
  }

  public String getHost() {
    return host;
  }

  /** The address this member binds and announces, for membership and event-bus traffic alike (a pod IP in Kubernetes). */
  public ClusterOptions setHost(String host) {
    this.host = Checks.notBlank("cluster.host", host);
    return this;
  }

  public int getPort() {
    return port;
  }

  /** The membership (Hazelcast) port. */
  public ClusterOptions setPort(int port) {
    this.port = Checks.range("cluster.port", port, 1, 65_535);
    return this;
  }

  public int getBusPort() {
    return busPort;
  }

  /** The event-bus TCP port; 0 takes a free one (members learn it through the cluster). */
  public ClusterOptions setBusPort(int busPort) {
    this.busPort = Checks.range("cluster.busPort", busPort, 0, 65_535);
    return this;
  }

  public List<String> getMembers() {
    return members;
  }

  /** {@code host:port} (or {@code host}, port 5701) of members to join over TCP; multicast is never used. */
  public ClusterOptions setMembers(List<String> members) {
    for (String member : members) {
      if (!member.matches("[A-Za-z0-9._\\-\\[\\]:]+")) {
        throw new ConfigException("cluster.members", "must be host or host:port entries, got '" + member + "'");
      }
    }
    this.members = List.copyOf(members);
    return this;
  }

  public Join getJoin() {
    return join;
  }

  public ClusterOptions setJoin(Join join) {
    this.join = join;
    return this;
  }

  public String getKubernetesServiceDns() {
    return kubernetesServiceDns;
  }

  /** With {@code join: kubernetes}: a headless service's DNS name; found by DNS lookup, no API permissions needed. */
  public ClusterOptions setKubernetesServiceDns(String kubernetesServiceDns) {
    this.kubernetesServiceDns = kubernetesServiceDns == null ? "" : kubernetesServiceDns.trim();
    return this;
  }

  public String getKubernetesServiceName() {
    return kubernetesServiceName;
  }

  /** With {@code join: kubernetes} and no DNS name: the service whose endpoints the Kubernetes API lists. */
  public ClusterOptions setKubernetesServiceName(String kubernetesServiceName) {
    this.kubernetesServiceName = kubernetesServiceName == null ? "" : kubernetesServiceName.trim();
    return this;
  }

  public String getKubernetesNamespace() {
    return kubernetesNamespace;
  }

  public ClusterOptions setKubernetesNamespace(String kubernetesNamespace) {
    this.kubernetesNamespace = kubernetesNamespace == null ? "" : kubernetesNamespace.trim();
    return this;
  }

  public int getMemberTimeoutSeconds() {
    return memberTimeoutSeconds;
  }

  /**
   * A member silent this long is dropped from the cluster and its event-bus consumers with it; until then
   * messages routed to it fail by their own timeout.
   */
  public ClusterOptions setMemberTimeoutSeconds(int memberTimeoutSeconds) {
    this.memberTimeoutSeconds = Checks.range("cluster.memberTimeoutSeconds", memberTimeoutSeconds, 2, 300);
    return this;
  }
}
