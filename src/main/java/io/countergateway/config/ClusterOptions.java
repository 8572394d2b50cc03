package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.vertx.core.json.JsonObject;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import java.util.List;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.choice;
import static io.countergateway.config.ConfigKey.items;
import static io.countergateway.config.ConfigKey.notBlank;

/**
 * The clustered event bus: gateways and the applications that send to them join one Hazelcast cluster, and
 * {@code counters.*} messages travel between their JVMs. Off by default: a gateway alone needs no cluster. Members
 * only: every member holds a certificate of the cluster's CA and the cluster's secret ({@link #requireMembersOnly}).
 */
public final class ClusterOptions {
  public enum Join { TCP, KUBERNETES }

  /** As many characters as a 192-bit random value in base64: a secret short enough to guess would be a known name. */
  static final int MIN_SECRET_LENGTH = 32;

  static final ConfigDef KEYS = ConfigDef.section("cluster");
  public static final ConfigKey<Boolean> ENABLED = KEYS.define("enabled", MEDIUM, BOOLEAN, false, any(),
    "join the clustered event bus, so senders in other JVMs reach `counters.*` (see *Clustered event bus*)");
  /** So that two deployments on one network stay apart. */
  public static final ConfigKey<String> NAME = KEYS.define("name", MEDIUM, STRING, "counter-gateway", notBlank(),
    "only members of the same cluster name join each other");
  /** For membership and event-bus traffic alike. */
  public static final ConfigKey<String> HOST = KEYS.define("host", MEDIUM, STRING, "127.0.0.1", notBlank(),
    "the address this member binds and announces (the pod IP in Kubernetes)");
  public static final ConfigKey<Integer> PORT = KEYS.define("port", LOW, INT, 5701, between(1, 65_535),
    "the membership (Hazelcast) port");
  /** Members learn it through the cluster. */
  public static final ConfigKey<Integer> BUS_PORT = KEYS.define("busPort", LOW, INT, 0, between(0, 65_535),
    "the event-bus TCP port; 0 = a free one");
  public static final ConfigKey<List<String>> MEMBERS = KEYS.define("members", MEDIUM, LIST, List.of(),
    items("[A-Za-z0-9._\\-\\[\\]:]+", "host or host:port"),
    "with `join: tcp`: `host:port` (or `host`, port 5701) of other members; multicast is never used");
  public static final ConfigKey<String> JOIN = KEYS.define("join", MEDIUM, choice("tcp", "kubernetes"), "tcp", any(),
    "how members find each other: the listed `members`, or a Kubernetes service");
  /** Found by DNS lookup: no API permissions needed. */
  public static final ConfigKey<String> KUBERNETES_SERVICE_DNS = KEYS.define("kubernetesServiceDns", MEDIUM, STRING, "", any(),
    "with `join: kubernetes`: a headless service's DNS name (no API permissions needed)");
  public static final ConfigKey<String> KUBERNETES_SERVICE_NAME = KEYS.define("kubernetesServiceName", MEDIUM, STRING, "", any(),
    "with `join: kubernetes` and no DNS name: the service whose endpoints the Kubernetes API lists");
  public static final ConfigKey<String> KUBERNETES_NAMESPACE = KEYS.define("kubernetesNamespace", MEDIUM, STRING, "", any(),
    "the Kubernetes namespace of `kubernetesServiceName`");
  /**
   * Until then messages routed to a silent member fail by their own timeout. Also the period of the checks that heal
   * a split (EventBusCluster, RepublishingClusterManager).
   */
  public static final ConfigKey<Duration> MEMBER_TIMEOUT = KEYS.define("memberTimeout", LOW, DURATION, Duration.ofSeconds(10),
    between(Duration.ofSeconds(2), Duration.ofMinutes(5)), "a member silent this long is dropped, and its event-bus consumers with it; also how often the "
      + "sides of a healed network split look for each other, and each member puts its consumers back into the routing")
    .formerly("memberTimeoutSeconds", ChronoUnit.SECONDS);
  /** Every member presents one and checks the other's: only holders of the cluster's certificate exchange messages. */
  public static final ConfigKey<String> TLS_CERT_FILE = KEYS.defineOptional("tls.certFile", MEDIUM, STRING, any(),
    "PEM certificate of this member for the event bus's TLS, both as server and as client (with `tls.keyFile` and "
      + "`tls.caFile`); required with `enabled`");
  public static final ConfigKey<String> TLS_KEY_FILE = KEYS.defineOptional("tls.keyFile", MEDIUM, STRING, any(),
    "the PEM private key of `tls.certFile`");
  public static final ConfigKey<String> TLS_CA_FILE = KEYS.defineOptional("tls.caFile", MEDIUM, STRING, any(),
    "PEM CA that every member's certificate must chain to; a peer without such a certificate is refused both ways");
  /** Shared by every member: Hazelcast admits only its holders (docs/security.md "Clustered event bus: members only"). */
  public static final ConfigKey<String> SECRET = KEYS.define("secret", MEDIUM, STRING, "", any(),
    "the cluster's shared secret (never logged), at least " + MIN_SECRET_LENGTH + " characters: a process "
      + "without it cannot join the membership or read its maps; usually from `CG_CLUSTER_SECRET` or `secretFile`");
  public static final ConfigKey<String> SECRET_FILE = KEYS.defineOptional("secretFile", MEDIUM, STRING, any(),
    "a file holding `secret` (a mounted secret), instead of `secret`");

  static {
    KEYS.retired("insecure", "a clustered bus always runs TLS with client certificates and needs cluster.secret "
      + "(docs/security.md \"Clustered event bus: members only\")");
  }

  private final boolean enabled;
  private final String name;
  private final String host;
  private final int port;
  private final int busPort;
  private final List<String> members;
  private final Join join;
  private final String kubernetesServiceDns;
  private final String kubernetesServiceName;
  private final String kubernetesNamespace;
  private final int memberTimeoutSeconds;
  private final TlsFiles tls;
  private final String secret;

  private ClusterOptions(ConfigSection section) {
    enabled = section.get(ENABLED);
    name = section.get(NAME);
    host = section.get(HOST);
    port = section.get(PORT);
    busPort = section.get(BUS_PORT);
    members = section.get(MEMBERS);
    join = section.get(JOIN).equals("kubernetes") ? Join.KUBERNETES : Join.TCP;
    kubernetesServiceDns = section.get(KUBERNETES_SERVICE_DNS).trim();
    kubernetesServiceName = section.get(KUBERNETES_SERVICE_NAME).trim();
    kubernetesNamespace = section.get(KUBERNETES_NAMESPACE).trim();
    memberTimeoutSeconds = (int) section.get(MEMBER_TIMEOUT).toSeconds();
    tls = TlsFiles.mutual(section, TLS_CERT_FILE, TLS_KEY_FILE, TLS_CA_FILE);
    secret = Secrets.resolve(section, SECRET, SECRET_FILE);
  }

  static ClusterOptions from(ConfigSection section) {
    ClusterOptions options = new ClusterOptions(section);
    if (options.enabled) {
      options.requireMembersOnly();
    }
    return options;
  }

  /**
   * Only a holder of the cluster's certificate and secret may be a member, wherever it binds (loopback too: any local
   * process could join otherwise): the event bus runs TLS with client certificates, so a process without a certificate
   * of the cluster's CA can neither send to a gateway nor be sent to, and Hazelcast's membership admits only a member
   * that knows the secret. Checked at a gateway's start and by every join, an application's too; throws naming the
   * first key missing.
   */
  public void requireMembersOnly() {
    if (!tls.isEnabled()) {
      throw new ConfigException(TLS_CERT_FILE.name(), "required: the clustered event bus runs only TLS with client "
        + "certificates; set " + TLS_CERT_FILE.name() + ", " + TLS_KEY_FILE.name() + " and " + TLS_CA_FILE.name()
        + " (this member's certificate of the cluster's CA), so that only its holders exchange messages");
    }
    if (secret == null || secret.isEmpty()) {
      throw new ConfigException(SECRET.name(), "required: set " + SECRET.name() + " or " + SECRET_FILE.name()
        + " (the same on every member, at least " + MIN_SECRET_LENGTH + " characters), so that a process without it "
        + "cannot join the cluster's membership");
    }
    if (secret.length() < MIN_SECRET_LENGTH) {
      throw new ConfigException(SECRET.name(), "must be at least " + MIN_SECRET_LENGTH + " characters (e.g. `openssl "
        + "rand -base64 32`): a short secret can be guessed");
    }
  }

  /** Options from a mapping as the file's {@code cluster} section would hold it (tests, tools). */
  public static ClusterOptions fromJson(JsonObject json) {
    return ConfigSection.read(json, KEYS.pattern(), ClusterOptions::from);
  }

  public boolean isEnabled() {
    return enabled;
  }

  /** Members only join a cluster of the same name, so two deployments on one network stay apart. */
  public String getName() {
    return name;
  }

  /** The address this member binds and announces, for membership and event-bus traffic alike (a pod IP in Kubernetes). */
  public String getHost() {
    return host;
  }

  /** The membership (Hazelcast) port. */
  public int getPort() {
    return port;
  }

  /** The event-bus TCP port; 0 takes a free one (members learn it through the cluster). */
  public int getBusPort() {
    return busPort;
  }

  /** {@code host:port} (or {@code host}, port 5701) of members to join over TCP; multicast is never used. */
  public List<String> getMembers() {
    return members;
  }

  public Join getJoin() {
    return join;
  }

  /** With {@code join: kubernetes}: a headless service's DNS name; found by DNS lookup, no API permissions needed. */
  public String getKubernetesServiceDns() {
    return kubernetesServiceDns;
  }

  /** With {@code join: kubernetes} and no DNS name: the service whose endpoints the Kubernetes API lists. */
  public String getKubernetesServiceName() {
    return kubernetesServiceName;
  }

  public String getKubernetesNamespace() {
    return kubernetesNamespace;
  }

  /**
   * A member silent this long is dropped from the cluster and its event-bus consumers with it; until then
   * messages routed to it fail by their own timeout. Also how often the sides of a healed split look for each other
   * to merge, and how often each member puts its own consumers back into the cluster's routing.
   */
  public int getMemberTimeoutSeconds() {
    return memberTimeoutSeconds;
  }

  /**
   * The name Hazelcast's membership checks, which holds the secret: {@code <name>-<HMAC-SHA256 of name under secret>}.
   * Hazelcast's open-source edition admits a joining member, and a client, on the cluster name alone, so a name
   * derived from the secret admits only its holders. As secret as {@code cluster.secret}: never logged.
   */
  public String getMembershipName() {
    requireMembersOnly();
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      return name + "-" + HexFormat.of().formatHex(mac.doFinal(name.getBytes(StandardCharsets.UTF_8)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }

  /** The event bus's TLS files; {@link TlsFiles#isEnabled()} false: the bus runs in plain TCP. */
  public TlsFiles getTls() {
    return tls;
  }
}
