package io.countergateway.ops;

import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.config.ClusterOptions;
import io.countergateway.config.ConfigLoader;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.http.HttpApi;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.HTTPIngressPath;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the manifests under {@code k8s/} and the code from drifting apart: every manifest is read into typed
 * Kubernetes objects, and each gateway container's configuration (the ConfigMap's file plus its {@code CG_*}
 * variables) is loaded by the gateway's own strict loader, then checked against its probes, ports and pod.
 */
class KubernetesManifestsTest {
  private static final String IMAGE = "counter-gateway";
  private static final String NAME_LABEL = "app.kubernetes.io/name";
  /** The HPA's per-pod metric, which prometheus-adapter derives from gateway_http_requests_total. */
  private static final String REQUESTS_PER_SECOND = "gateway_http_requests_per_second";
  private static final Pattern LOCAL_URL = Pattern.compile("https?://[^\\s\"']+");
  private static Vertx vertx;

  @BeforeAll
  static void startVertx() {
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void closeVertx() {
    await(vertx.close());
  }

  @Test
  @DisplayName("every manifest under k8s/ reads into typed objects without unknown fields, and every file is used")
  void everyManifestIsTypedAndUsed() throws IOException {
    Set<Path> referenced = new TreeSet<>();
    for (String overlay : List.of("postgres", "mysql", "sidecar", "ingress")) {
      collectFiles(Manifests.ROOT.resolve("k8s/overlays/" + overlay).normalize(), referenced);
    }
    List<Path> files;
    try (Stream<Path> walk = Files.walk(Path.of("k8s"))) {
      files = walk.filter(Files::isRegularFile).filter(file -> !file.startsWith("k8s/monitoring")).toList();
    }
    for (Path file : files) {
      if (!file.getFileName().toString().equals("kustomization.yaml")) {
        assertThat(Manifests.read(file)).as(file.toString()).isNotEmpty();
      }
      assertThat(referenced).as("files the overlays use").contains(file.normalize());
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mysql", "sidecar", "ingress"})
  @DisplayName("each overlay's gateway configuration is made of real keys, and its probes, ports and grace period fit it")
  void overlayFitsTheCode(String overlay) {
    List<HasMetadata> objects = Manifests.build(Path.of("k8s/overlays", overlay));
    List<HasMetadata> workloads = objects.stream()
      .filter(object -> object instanceof Deployment || object instanceof StatefulSet).toList();
    assertThat(workloads).hasSize(1);
    PodTemplateSpec template = workloads.get(0) instanceof StatefulSet set ? set.getSpec().getTemplate()
      : ((Deployment) workloads.get(0)).getSpec().getTemplate();
    PodSpec pod = template.getSpec();
    List<Container> gateways = Stream.concat(pod.getContainers().stream(), pod.getInitContainers().stream())
      .filter(container -> container.getImage().equals(IMAGE)).toList();
    assertThat(gateways).as("gateway containers").hasSize(1);
    Container gateway = gateways.get(0);
    GatewayConfig config = effectiveConfig(gateway, pod, objects);
    int port = probePort(config);
    Set<String> routes = probeRoutes(config);

    assertThat(routes).contains("/health/live", "/health/ready", "/metrics");
    List<Integer> served = config.getManagement().isEnabled()
      ? List.of(config.getHttp().getPort(), config.getManagement().getPort()) : List.of(config.getHttp().getPort());
    assertThat(gateway.getPorts()).extracting(p -> p.getContainerPort()).allSatisfy(p -> assertThat(served).contains(p));
    if (config.getManagement().isEnabled()) {
      assertThat(gateway.getPorts()).extracting(p -> p.getContainerPort()).containsExactlyInAnyOrderElementsOf(served);
    }
    assertThat(gateway.getStartupProbe()).as("the gateway's startup probe").isNotNull();
    for (Probe probe : Stream.of(gateway.getStartupProbe(), gateway.getReadinessProbe(), gateway.getLivenessProbe())
      .filter(Objects::nonNull).toList()) {
      HTTPGetAction get = probe.getHttpGet();
      if (get == null) {
        // an exec probe of a loopback gateway: the URL it asks
        URI uri = URI.create(probeUrl(probe));
        assertThat(uri.getHost()).as("exec probe host").isEqualTo(config.getHttp().getHost());
        assertThat(routes).as("probe path").contains(uri.getPath());
        assertThat(uri.getPort()).as("probe port").isEqualTo(port);
      } else {
        assertThat(routes).as("probe path").contains(get.getPath());
        assertThat(portNumber(get.getPort(), gateway)).as("probe port").isEqualTo(port);
      }
    }
    long preStopSeconds = gateway.getLifecycle() == null ? 0
      : gateway.getLifecycle().getPreStop().getSleep().getSeconds();
    assertThat(pod.getTerminationGracePeriodSeconds() * 1000)
      .as("terminationGracePeriodSeconds against preStop pause + shutdown.timeout")
      .isGreaterThan(preStopSeconds * 1000 + config.getShutdownTimeoutMs());
    requireHardened(pod);

    checkJournalVolume(workloads.get(0), gateway, pod, config);

    Map<String, String> annotations = template.getMetadata().getAnnotations();
    if (annotations != null && "true".equals(annotations.get("prometheus.io/scrape"))) {
      assertThat(annotations.get("prometheus.io/port")).isEqualTo(Integer.toString(port));
      assertThat(routes).contains(annotations.get("prometheus.io/path"));
    }

    if (overlay.equals("sidecar")) {
      assertThat(pod.getInitContainers()).contains(gateway);
      assertThat(gateway.getRestartPolicy()).as("native sidecar").isEqualTo("Always");
      assertThat(config.getHttp().getHost()).as("the sidecar binds loopback").isEqualTo("127.0.0.1");
      assertThat(config.getHttp().isLoopback()).as("the sidecar needs no tokens").isTrue();
      assertThat(config.getManagement().isEnabled()).as("the sidecar's probes and its web tier share one port").isFalse();
      List<String> urls = pod.getContainers().stream().flatMap(KubernetesManifestsTest::urlsOf).toList();
      assertThat(urls).isNotEmpty().allSatisfy(url -> {
        URI uri = URI.create(url);
        assertThat(uri.getHost()).isEqualTo("127.0.0.1");
        assertThat(uri.getPort()).isEqualTo(port);
        assertThat(uri.getPath().isEmpty() || routes.contains(uri.getPath())).as(url).isTrue();
      });
      // a counter-database outage must not take the web tier out of its Service: the web pod's readiness asks
      // whether the sidecar takes increments (into its journal), not whether the database answers
      assertThat(pod.getContainers()).allSatisfy(web -> assertThat(URI.create(probeUrl(web.getReadinessProbe())).getPath())
        .as(web.getName() + " readiness").isEqualTo("/health/accepting"));
      assertThat(gateway.getReadinessProbe()).as("the sidecar's readiness is the web container's").isNull();
    } else {
      assertThat(config.getAuth().isEnabled()).as("a gateway behind a Service carries tokens, never anonymous").isTrue();
      assertThat(config.getManagement().isEnabled()).as("probes and scrapes on a port clients do not reach").isTrue();
      checkServiceAndScaling(objects, workloads.get(0), template, gateway, config);
      checkPlacementAndIdentity(objects, template);
    }
  }

  @Test
  @DisplayName("the image the manifests run is the one Jib builds from pom.xml")
  void imageMatchesThePom() throws Exception {
    String version = PomFile.version();
    String imageName = PomFile.property("image.name");
    assertThat(imageName.replace("${project.version}", version)).isEqualTo(IMAGE + ":" + version);
    for (String dir : List.of("k8s/base", "k8s/overlays/sidecar")) {
      assertThat(Manifests.kustomization(Path.of(dir)).images()).as(dir)
        .anySatisfy(image -> {
          assertThat(image.name()).isEqualTo(IMAGE);
          assertThat(image.newTag()).isEqualTo(version);
        });
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mysql", "sidecar", "ingress"})
  @DisplayName("kustomize itself (kubectl kustomize) renders each overlay into the same typed objects")
  void kustomizeRendersTheSame(String overlay) throws Exception {
    Assumptions.assumeTrue(onPath("kubectl"), "kubectl is not installed");
    Process process = new ProcessBuilder("kubectl", "kustomize", "k8s/overlays/" + overlay).start();
    String rendered = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String errors = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(errors).isZero();
    Path file = Files.createTempFile("kustomize-" + overlay, ".yaml");
    try {
      Files.writeString(file, rendered);
      List<HasMetadata> fromKustomize = Manifests.read(file);
      assertThat(fromKustomize.stream().map(KubernetesManifestsTest::kindAndName).sorted().toList())
        .isEqualTo(Manifests.build(Path.of("k8s/overlays", overlay)).stream()
          .map(KubernetesManifestsTest::kindAndName).sorted().toList());
      assertThat(rendered).contains("image: " + IMAGE + ":");
    } finally {
      Files.delete(file);
    }
  }

  /** The ConfigMap's file laid under the container's CG_ variables, read by the gateway's strict loader. */
  private static GatewayConfig effectiveConfig(Container container, PodSpec pod, List<HasMetadata> objects) {
    Map<String, String> env = new HashMap<>();
    for (EnvFromSource source : container.getEnvFrom()) {
      env.putAll(configMap(objects, source.getConfigMapRef().getName()).getData());
    }
    container.getEnv().forEach(variable -> env.put(variable.getName(), variable.getValue()));
    Path configPath = Path.of(env.get(ConfigLoader.CONFIG_FILE_VARIABLE));
    Volume configVolume = mountedVolume(container, pod, configPath.getParent().toString());
    String file = configMap(objects, configVolume.getConfigMap().getName()).getData()
      .get(configPath.getFileName().toString());
    assertThat(file).as("the file CG_CONFIG names").isNotNull();
    JsonObject raw;
    try {
      raw = new JsonObject(Manifests.YAML.readValue(file, Map.class));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    Map<String, String> variables = env.entrySet().stream().filter(entry -> entry.getKey().startsWith("CG_"))
      .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    JsonObject merged = ConfigLoader.applyEnvironment(raw, variables);
    // secret files exist only in the pod: check each is a mounted Secret's item, then read the rest with a stand-in of
    // the Secret's shape (a network bind without tokens would rightly refuse to start)
    for (String key : List.of("database.passwordFile", "auth.tokensFile")) {
      String[] path = key.split("\\.");
      JsonObject section = merged.getJsonObject(path[0]);
      String secretFile = section == null ? null : section.getString(path[1]);
      if (secretFile != null && !secretFile.isBlank()) {
        Path secretPath = Path.of(secretFile);
        Volume volume = mountedVolume(container, pod, secretPath.getParent().toString());
        assertThat(volume.getSecret()).as(key + " is a mounted Secret").isNotNull();
        assertThat(volume.getSecret().getItems()).as(key)
          .anySatisfy(item -> assertThat(item.getPath()).isEqualTo(secretPath.getFileName().toString()));
        section.put(path[1], standInSecret(key));
      }
    }
    return GatewayConfig.fromJson(merged);
  }

  /** A file such as the Secret behind {@code key} mounts: a password, or one token line. */
  private static String standInSecret(String key) {
    try {
      Path file = Files.createTempFile("stand-in-secret", "");
      file.toFile().deleteOnExit();
      Files.writeString(file, key.startsWith("auth.") ? "stand-in-token-0123456789:write\n" : "stand-in-password\n");
      return file.toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Set<String> routes(GatewayConfig config) {
    GatewayServices services = new GatewayServices(config, new GatewayState(),
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    return HttpApi.router(vertx, services, null).getRoutes().stream().map(Route::getPath).filter(Objects::nonNull)
      .collect(Collectors.toSet());
  }

  /** The routes of the port probes and scrapes go to: the management port's with management.port, else the API's. */
  private static Set<String> probeRoutes(GatewayConfig config) {
    if (!config.getManagement().isEnabled()) {
      return routes(config);
    }
    GatewayServices services = new GatewayServices(config, new GatewayState(),
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    return HttpApi.managementRouter(vertx, services).getRoutes().stream().map(Route::getPath).filter(Objects::nonNull)
      .collect(Collectors.toSet());
  }

  private static int probePort(GatewayConfig config) {
    return config.getManagement().isEnabled() ? config.getManagement().getPort() : config.getHttp().getPort();
  }

  /**
   * The journal's directory is on a volume that outlives the container: a claim of the StatefulSet's (it follows the
   * replica to its next pod), or for a sidecar an emptyDir (it survives the container's restarts, not the pod).
   */
  private static void checkJournalVolume(HasMetadata workload, Container gateway, PodSpec pod, GatewayConfig config) {
    assertThat(config.getJournal().isEnabled()).as("journal.enabled").isTrue();
    Path journal = Path.of(config.getJournal().getDir());
    VolumeMount mount = gateway.getVolumeMounts().stream().filter(m -> journal.startsWith(m.getMountPath()))
      .findFirst().orElseThrow(() -> new AssertionError("nothing mounted at or above journal.dir " + journal));
    assertThat(mount.getReadOnly()).as("the journal's mount is writable").isNotEqualTo(Boolean.TRUE);
    if (workload instanceof StatefulSet set) {
      assertThat(set.getSpec().getVolumeClaimTemplates()).as("a claim per replica for the journal")
        .anySatisfy(claim -> assertThat(claim.getMetadata().getName()).isEqualTo(mount.getName()));
    } else {
      Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName())).findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + mount.getName()));
      assertThat(volume.getEmptyDir()).as("the sidecar's journal volume").isNotNull();
    }
  }

  private static void checkServiceAndScaling(List<HasMetadata> objects, HasMetadata workload, PodTemplateSpec template,
                                             Container gateway, GatewayConfig config) {
    Map<String, String> podLabels = template.getMetadata().getLabels();
    Service service = only(objects, Service.class).get(0);
    assertThat(podLabels).containsAllEntriesOf(service.getSpec().getSelector());
    assertThat(service.getSpec().getPorts()).extracting(port -> port.getPort())
      .containsExactlyInAnyOrder(config.getHttp().getPort(), config.getManagement().getPort());
    service.getSpec().getPorts().forEach(port -> assertThat(portNumber(port.getTargetPort(), gateway)).isEqualTo(port.getPort()));
    assertThat(config.getHttp().getHost()).as("a Service needs the gateway on the pod's address").isEqualTo("0.0.0.0");
    PodDisruptionBudget budget = only(objects, PodDisruptionBudget.class).get(0);
    assertThat(podLabels).containsAllEntriesOf(budget.getSpec().getSelector().getMatchLabels());
    HorizontalPodAutoscaler autoscaler = only(objects, HorizontalPodAutoscaler.class).get(0);
    assertThat(autoscaler.getSpec().getScaleTargetRef().getName()).isEqualTo(workload.getMetadata().getName());
    assertThat(autoscaler.getSpec().getScaleTargetRef().getKind()).isEqualTo(workload.getKind());
    Integer replicas = workload instanceof StatefulSet set ? set.getSpec().getReplicas()
      : ((Deployment) workload).getSpec().getReplicas();
    assertThat(autoscaler.getSpec().getMinReplicas()).isEqualTo(replicas);
    if (workload instanceof StatefulSet set) {
      assertThat(set.getSpec().getServiceName()).as("the StatefulSet's service").isEqualTo(service.getMetadata().getName());
    }
    // each writer (ingest verticle of a replica) owns a lane of maxInFlight + 1 slots (ReplicaLanes)
    int laneSlots = config.getHttp().getInstances() * autoscaler.getSpec().getMaxReplicas()
      * (config.getBatching().getMaxInFlight() + 1);
    config.getNamespaces().values().forEach(namespace -> assertThat(namespace.getSlots())
      .as("namespaces.%s.slots against %d lane slots (ingest verticles x maxReplicas x (maxInFlight + 1))",
        namespace.getName(), laneSlots)
      .isGreaterThanOrEqualTo(laneSlots));
    checkNetworkPolicy(objects, podLabels, config);
  }

  /**
   * The gateway's HTTP port only from pods labelled as its clients, its management port only from the monitoring
   * namespace; the cluster's membership and event-bus ports only from the gateway's own pods; nothing else reaches
   * the pods.
   */
  private static void checkNetworkPolicy(List<HasMetadata> objects, Map<String, String> podLabels, GatewayConfig config) {
    NetworkPolicy policy = networkPolicy(objects, IMAGE);
    assertThat(podLabels).containsAllEntriesOf(policy.getSpec().getPodSelector().getMatchLabels());
    assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress");
    Map<Set<Integer>, List<NetworkPolicyPeer>> peersByPorts = new HashMap<>();
    for (NetworkPolicyIngressRule rule : policy.getSpec().getIngress()) {
      Set<Integer> ports = rule.getPorts().stream().map(port -> {
        assertThat(port.getProtocol()).isEqualTo("TCP");
        return port.getPort().getIntVal();
      }).collect(Collectors.toSet());
      assertThat(rule.getFrom()).as("a rule for ports %s names who may connect", ports).isNotEmpty();
      peersByPorts.put(ports, rule.getFrom());
    }
    int clusterPort = ClusterOptions.PORT.defaultValue();
    int busPort = 5702; // cluster.busPort as the Kubernetes recipe of docs/scaling.md fixes it (its default picks a free port)
    assertThat(peersByPorts.keySet()).containsExactlyInAnyOrder(Set.of(config.getHttp().getPort()),
      Set.of(config.getManagement().getPort()), Set.of(clusterPort, busPort));

    List<NetworkPolicyPeer> httpPeers = peersByPorts.get(Set.of(config.getHttp().getPort()));
    assertThat(httpPeers).singleElement().satisfies(peer -> {
      assertThat(peer.getIpBlock()).as("no address ranges").isNull();
      assertThat(peer.getNamespaceSelector()).isNull();
      assertThat(peer.getPodSelector().getMatchLabels()).containsExactly(Map.entry("counter-gateway-client", "true"));
    });
    List<NetworkPolicyPeer> managementPeers = peersByPorts.get(Set.of(config.getManagement().getPort()));
    assertThat(managementPeers).singleElement().satisfies(peer -> {
      assertThat(peer.getIpBlock()).as("no address ranges").isNull();
      assertThat(peer.getPodSelector()).isNull();
      assertThat(peer.getNamespaceSelector().getMatchLabels())
        .containsExactly(Map.entry("kubernetes.io/metadata.name", "monitoring"));
    });

    List<NetworkPolicyPeer> clusterPeers = peersByPorts.get(Set.of(clusterPort, busPort));
    assertThat(clusterPeers).singleElement().satisfies(peer -> {
      assertThat(peer.getNamespaceSelector()).as("this namespace only").isNull();
      assertThat(peer.getIpBlock()).isNull();
      assertThat(podLabels).containsAllEntriesOf(peer.getPodSelector().getMatchLabels());
      assertThat(peer.getPodSelector().getMatchLabels()).isNotEmpty();
    });
  }

  private static NetworkPolicy networkPolicy(List<HasMetadata> objects, String name) {
    return only(objects, NetworkPolicy.class).stream().filter(policy -> policy.getMetadata().getName().equals(name))
      .findFirst().orElseThrow(() -> new AssertionError("no NetworkPolicy " + name));
  }

  /**
   * The ingress overlay: an Ingress that routes the public beacon paths, and only those, to the Service's http port (the
   * one the gateway's http.port listens on), and a NetworkPolicy that admits the ingress controller's namespace to
   * that port and nothing else; the base's policy still holds for the rest.
   */
  @Test
  @DisplayName("the ingress overlay routes only the public beacon paths to the http port, and admits the ingress "
    + "controller's namespace to that port only")
  void ingressRoutesBeaconsThroughItsNamespace() {
    List<HasMetadata> objects = Manifests.build(Path.of("k8s/overlays/ingress"));
    StatefulSet workload = only(objects, StatefulSet.class).get(0);
    PodSpec pod = workload.getSpec().getTemplate().getSpec();
    Container gateway = pod.getContainers().stream().filter(container -> container.getImage().equals(IMAGE))
      .findFirst().orElseThrow();
    GatewayConfig config = effectiveConfig(gateway, pod, objects);
    Service service = only(objects, Service.class).get(0);
    ServicePort http = service.getSpec().getPorts().stream()
      .filter(port -> port.getName().equals("http")).findFirst().orElseThrow();
    assertThat(portNumber(http.getTargetPort(), gateway)).as("the Service's http port reaches http.port")
      .isEqualTo(config.getHttp().getPort());

    Ingress ingress = only(objects, Ingress.class).get(0);
    assertThat(ingress.getMetadata().getLabels()).containsAllEntriesOf(recommendedLabels());
    Map<String, String> paths = new HashMap<>();
    for (IngressRule rule : ingress.getSpec().getRules()) {
      for (HTTPIngressPath path : rule.getHttp().getPaths()) {
        paths.put(path.getPath(), path.getPathType());
        assertThat(path.getBackend().getService().getName()).as(path.getPath()).isEqualTo(service.getMetadata().getName());
        assertThat(path.getBackend().getService().getPort().getName()).as(path.getPath()).isEqualTo(http.getName());
      }
    }
    assertThat(paths).as("the public paths: beacon.js's beacon and script, GoatCounter's, Umami's and Plausible's")
      .isEqualTo(Map.of("/v1/beacon", "Prefix", "/v1/beacon.js", "Exact", "/count", "Exact", "/api/send", "Exact",
        "/api/event", "Exact"));
    Set<String> routes = routes(config);
    assertThat(routes).as("the gateway serves each routed path: the beacon, its script and the trackers' doors")
      .contains("/v1/beacon.js", "/count", "/api/send", "/api/event")
      .anySatisfy(route -> assertThat(route).startsWith("/v1/beacon/"));
    assertThat(config.getHttp().getTrustedProxies().contains("10.1.2.3"))
      .as("a controller pod's X-Forwarded-For names the browser").isTrue();

    NetworkPolicy admitted = networkPolicy(objects, IMAGE + "-ingress");
    assertThat(admitted.getSpec().getPodSelector().getMatchLabels())
      .isEqualTo(networkPolicy(objects, IMAGE).getSpec().getPodSelector().getMatchLabels());
    assertThat(admitted.getSpec().getPolicyTypes()).containsExactly("Ingress");
    assertThat(admitted.getSpec().getIngress()).singleElement().satisfies(rule -> {
      assertThat(rule.getPorts()).singleElement().satisfies(port -> {
        assertThat(port.getProtocol()).isEqualTo("TCP");
        assertThat(port.getPort().getIntVal()).isEqualTo(config.getHttp().getPort());
      });
      assertThat(rule.getFrom()).singleElement().satisfies(peer -> {
        assertThat(peer.getPodSelector()).as("every pod of the controller's namespace").isNull();
        assertThat(peer.getIpBlock()).isNull();
        assertThat(peer.getNamespaceSelector().getMatchLabels())
          .containsExactly(Map.entry("kubernetes.io/metadata.name", "ingress-nginx"));
      });
    });
    checkNetworkPolicy(objects, workload.getSpec().getTemplate().getMetadata().getLabels(), config);
  }

  /**
   * Replicas spread over zones and nodes (so the PodDisruptionBudget's one-at-a-time means one node's loss), an
   * identity without a mounted API token, the recommended labels on every object, and an autoscaler that scales on
   * requests per pod as well as CPU.
   */
  private static void checkPlacementAndIdentity(List<HasMetadata> objects, PodTemplateSpec template) {
    PodSpec pod = template.getSpec();
    Map<String, String> selector = Map.of(NAME_LABEL, IMAGE);
    assertThat(pod.getTopologySpreadConstraints()).as("topology spread")
      .extracting(constraint -> constraint.getTopologyKey())
      .containsExactlyInAnyOrder("topology.kubernetes.io/zone", "kubernetes.io/hostname");
    assertThat(pod.getTopologySpreadConstraints()).allSatisfy(constraint -> {
      assertThat(constraint.getMaxSkew()).isEqualTo(1);
      assertThat(constraint.getLabelSelector().getMatchLabels()).isEqualTo(selector);
    });
    assertThat(pod.getAffinity().getPodAntiAffinity().getPreferredDuringSchedulingIgnoredDuringExecution())
      .as("pod anti-affinity by node").anySatisfy(term -> {
        assertThat(term.getPodAffinityTerm().getTopologyKey()).isEqualTo("kubernetes.io/hostname");
        assertThat(term.getPodAffinityTerm().getLabelSelector().getMatchLabels()).isEqualTo(selector);
      });

    ServiceAccount account = only(objects, ServiceAccount.class).stream()
      .filter(candidate -> candidate.getMetadata().getName().equals(pod.getServiceAccountName())).findFirst()
      .orElseThrow(() -> new AssertionError("no ServiceAccount " + pod.getServiceAccountName()));
    assertThat(account.getAutomountServiceAccountToken()).as("the ServiceAccount mounts no token").isFalse();
    assertThat(pod.getAutomountServiceAccountToken()).as("the pod mounts no token").isFalse();

    Map<String, String> recommended = recommendedLabels();
    assertThat(template.getMetadata().getLabels()).as("pod labels").containsAllEntriesOf(recommended);
    for (HasMetadata object : objects) {
      if (!(object instanceof ConfigMap)) {
        assertThat(object.getMetadata().getLabels()).as(kindAndName(object) + " labels").containsAllEntriesOf(recommended);
      }
    }

    HorizontalPodAutoscaler autoscaler = only(objects, HorizontalPodAutoscaler.class).get(0);
    assertThat(autoscaler.getSpec().getMetrics()).as("the autoscaler's metrics")
      .anySatisfy(metric -> {
        assertThat(metric.getType()).isEqualTo("Pods");
        assertThat(metric.getPods().getMetric().getName()).isEqualTo(REQUESTS_PER_SECOND);
        assertThat(metric.getPods().getTarget().getType()).isEqualTo("AverageValue");
      })
      .anySatisfy(metric -> {
        assertThat(metric.getType()).isEqualTo("Resource");
        assertThat(metric.getResource().getName()).isEqualTo("cpu");
      });
    // the per-pod metric exists only where prometheus-adapter makes it from the gateway's own counter
    JsonNode adapterRule = MonitoringFiles.read(Manifests.YAML, MonitoringFiles.ADAPTER_RULES).path("rules").get(0);
    assertThat(adapterRule.path("name").path("as").asText()).isEqualTo(REQUESTS_PER_SECOND);
    assertThat(adapterRule.path("seriesQuery").asText()).startsWith("gateway_http_requests_total{");
  }

  /** app.kubernetes.io/* as Kubernetes recommends them, the version being the pom's. */
  static Map<String, String> recommendedLabels() {
    return Map.of(NAME_LABEL, IMAGE, "app.kubernetes.io/instance", IMAGE, "app.kubernetes.io/version", PomFile.version(),
      "app.kubernetes.io/component", "gateway", "app.kubernetes.io/part-of", IMAGE,
      "app.kubernetes.io/managed-by", "kustomize");
  }

  @Test
  @DisplayName("the ServiceMonitor scrapes the gateway's Service on the management port's /metrics with a bearer token from a Secret")
  void serviceMonitorScrapesWithAToken() {
    List<HasMetadata> objects = Manifests.build(Path.of("k8s/overlays/postgres"));
    Service service = only(objects, Service.class).get(0);
    JsonNode monitor = MonitoringFiles.read(Manifests.YAML, MonitoringFiles.SERVICE_MONITOR);
    assertThat(monitor.path("apiVersion").asText()).isEqualTo("monitoring.coreos.com/v1");
    assertThat(monitor.path("kind").asText()).isEqualTo("ServiceMonitor");
    assertThat(labelsOf(monitor)).containsAllEntriesOf(recommendedLabels());
    Map<String, String> selector = new HashMap<>();
    monitor.path("spec").path("selector").path("matchLabels").fields()
      .forEachRemaining(entry -> selector.put(entry.getKey(), entry.getValue().asText()));
    assertThat(selector).isNotEmpty();
    assertThat(service.getMetadata().getLabels()).as("the Service's labels against the selector").containsAllEntriesOf(selector);

    JsonNode endpoint = monitor.path("spec").path("endpoints").get(0);
    assertThat(service.getSpec().getPorts()).extracting(port -> port.getName()).contains(endpoint.path("port").asText());
    StatefulSet gateway = only(objects, StatefulSet.class).get(0);
    GatewayConfig config = effectiveConfig(gateway.getSpec().getTemplate().getSpec().getContainers().get(0),
      gateway.getSpec().getTemplate().getSpec(), objects);
    assertThat(probeRoutes(config)).contains(endpoint.path("path").asText());
    assertThat(service.getSpec().getPorts()).filteredOn(port -> port.getName().equals(endpoint.path("port").asText()))
      .singleElement().satisfies(port -> assertThat(port.getPort()).isEqualTo(config.getManagement().getPort()));
    // /metrics needs the read right whenever tokens are set, as they are behind a Service
    assertThat(config.getAuth().isEnabled()).isTrue();
    JsonNode authorization = endpoint.path("authorization");
    assertThat(authorization.path("type").asText()).isEqualTo("Bearer");
    assertThat(authorization.path("credentials").path("name").asText()).isNotBlank();
    assertThat(authorization.path("credentials").path("key").asText()).isNotBlank();

    assertThat(Manifests.kustomization(MonitoringFiles.DIR).resourcesOrNone())
      .containsExactlyInAnyOrder(MonitoringFiles.SERVICE_MONITOR.getFileName().toString(),
        MonitoringFiles.PROMETHEUS_RULE.getFileName().toString());
  }

  @Test
  @DisplayName("the PrometheusRule holds exactly the rules of alerts.yaml (-Dmonitoring.write=true writes it anew)")
  void prometheusRuleIsGeneratedFromTheAlerts() throws IOException {
    String expected = MonitoringFiles.prometheusRule(recommendedLabels());
    String actual = Files.exists(MonitoringFiles.PROMETHEUS_RULE) ? Files.readString(MonitoringFiles.PROMETHEUS_RULE) : "";
    if (!actual.equals(expected) && Boolean.getBoolean("monitoring.write")) {
      Files.writeString(MonitoringFiles.PROMETHEUS_RULE, expected);
      return;
    }
    assertThat(actual).as(MonitoringFiles.PROMETHEUS_RULE + " against alerts.yaml (write it with "
      + "mvn -o -q test -Dtest=KubernetesManifestsTest -Dmonitoring.write=true)").isEqualTo(expected);
    JsonNode rule = MonitoringFiles.read(Manifests.YAML, MonitoringFiles.PROMETHEUS_RULE);
    assertThat(rule.path("spec").path("groups")).isEqualTo(MonitoringFiles.alertRules().path("groups"));
  }

  private static Map<String, String> labelsOf(JsonNode object) {
    Map<String, String> labels = new HashMap<>();
    object.path("metadata").path("labels").fields().forEachRemaining(entry -> labels.put(entry.getKey(), entry.getValue().asText()));
    return labels;
  }

  /** The one URL an exec probe's command asks. */
  private static String probeUrl(Probe probe) {
    assertThat(probe).isNotNull();
    assertThat(probe.getExec()).as("an exec probe").isNotNull();
    return probe.getExec().getCommand().stream().filter(word -> LOCAL_URL.matcher(word).matches()).findFirst()
      .orElseThrow(() -> new AssertionError("no URL in " + probe.getExec().getCommand()));
  }

  /** Non-root, read-only root filesystem with a writable /tmp, and resources for every container. */
  private static void requireHardened(PodSpec pod) {
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    for (Container container : Stream.concat(pod.getContainers().stream(), pod.getInitContainers().stream()).toList()) {
      assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).as(container.getName()).isTrue();
      assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).as(container.getName()).isFalse();
      assertThat(container.getResources().getRequests()).as(container.getName()).containsKeys("cpu", "memory");
      assertThat(container.getResources().getLimits()).as(container.getName()).containsKey("memory");
      if (container.getImage().equals(IMAGE)) {
        assertThat(mountedVolume(container, pod, "/tmp").getEmptyDir()).as("/tmp").isNotNull();
      }
    }
  }

  private static Volume mountedVolume(Container container, PodSpec pod, String mountPath) {
    VolumeMount mount = container.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(mountPath))
      .findFirst().orElseThrow(() -> new AssertionError(container.getName() + " mounts nothing at " + mountPath));
    return pod.getVolumes().stream().filter(volume -> volume.getName().equals(mount.getName())).findFirst()
      .orElseThrow(() -> new AssertionError("no volume " + mount.getName()));
  }

  private static int portNumber(IntOrString port, Container container) {
    if (port.getIntVal() != null) {
      return port.getIntVal();
    }
    return container.getPorts().stream().filter(p -> port.getStrVal().equals(p.getName())).findFirst()
      .orElseThrow(() -> new AssertionError("no container port named " + port.getStrVal())).getContainerPort();
  }

  /** Every URL in a container's environment, command and exec probes. */
  private static Stream<String> urlsOf(Container container) {
    List<String> texts = new ArrayList<>();
    container.getEnv().stream().map(EnvVar::getValue).filter(Objects::nonNull).forEach(texts::add);
    texts.addAll(container.getCommand());
    Stream.of(container.getReadinessProbe(), container.getLivenessProbe(), container.getStartupProbe())
      .filter(probe -> probe != null && probe.getExec() != null).forEach(probe -> texts.addAll(probe.getExec().getCommand()));
    return texts.stream().flatMap(text -> {
      Matcher matcher = LOCAL_URL.matcher(text);
      List<String> urls = new ArrayList<>();
      while (matcher.find()) {
        urls.add(matcher.group().replace("$COUNTER_GATEWAY_URL", ""));
      }
      return urls.stream();
    });
  }

  private static ConfigMap configMap(List<HasMetadata> objects, String name) {
    return only(objects, ConfigMap.class).stream().filter(map -> map.getMetadata().getName().equals(name)).findFirst()
      .orElseThrow(() -> new AssertionError("no ConfigMap " + name));
  }

  private static <T> List<T> only(List<HasMetadata> objects, Class<T> type) {
    return objects.stream().filter(type::isInstance).map(type::cast).toList();
  }

  private static void collectFiles(Path dir, Set<Path> files) {
    files.add(dir.resolve("kustomization.yaml").normalize());
    for (String resource : Manifests.kustomization(dir).resourcesOrNone()) {
      Path path = dir.resolve(resource).normalize();
      if (Files.isDirectory(path)) {
        collectFiles(path, files);
      } else {
        files.add(path);
      }
    }
  }

  /** Kind and name, without the hash kustomize appends to generated ConfigMaps. */
  private static String kindAndName(HasMetadata object) {
    return object.getKind() + "/" + object.getMetadata().getName().replaceFirst("-[a-z0-9]{10}$", "");
  }

  private static boolean onPath(String binary) {
    return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
      .anyMatch(dir -> Files.isExecutable(Path.of(dir, binary)));
  }
}
