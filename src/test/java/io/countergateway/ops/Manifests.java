package io.countergateway.ops;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The manifests under {@code k8s/} read into typed Kubernetes objects (fabric8's model), a field the model does
 * not know being an error, and the overlays composed the way kustomize composes them (resources, directories of
 * resources, ConfigMap generators; this project uses no patches), without kustomize's name hashes.
 */
final class Manifests {
  static final Path ROOT = Path.of(".");
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
    .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  private static final Map<String, Class<? extends HasMetadata>> TYPES = Map.of(
    "Deployment", Deployment.class,
    "StatefulSet", StatefulSet.class,
    "Service", Service.class,
    "ServiceAccount", ServiceAccount.class,
    "ConfigMap", ConfigMap.class,
    "PodDisruptionBudget", PodDisruptionBudget.class,
    "HorizontalPodAutoscaler", HorizontalPodAutoscaler.class,
    "NetworkPolicy", NetworkPolicy.class,
    "Ingress", Ingress.class);

  /** The part of kustomize's schema this project uses; anything else in a kustomization.yaml fails to read. */
  record Kustomization(String apiVersion, String kind, List<String> resources, List<Generator> configMapGenerator,
                       List<Image> images) {
    List<String> resourcesOrNone() {
      return resources == null ? List.of() : resources;
    }
  }

  record Generator(String name, List<String> files, List<String> literals) {
  }

  record Image(String name, String newName, String newTag) {
  }

  private Manifests() {
  }

  static Kustomization kustomization(Path dir) {
    try {
      return YAML.readValue(dir.resolve("kustomization.yaml").toFile(), Kustomization.class);
    } catch (IOException e) {
      throw new AssertionError(dir.resolve("kustomization.yaml") + ": " + e.getMessage(), e);
    }
  }

  /** Every object an overlay (or the base) yields, generated ConfigMaps included. */
  static List<HasMetadata> build(Path dir) {
    Kustomization kustomization = kustomization(dir);
    List<HasMetadata> objects = new ArrayList<>();
    for (String resource : kustomization.resourcesOrNone()) {
      Path path = dir.resolve(resource).normalize();
      objects.addAll(Files.isDirectory(path) ? build(path) : read(path));
    }
    if (kustomization.configMapGenerator() != null) {
      kustomization.configMapGenerator().forEach(generator -> objects.add(generate(dir, generator)));
    }
    return objects;
  }

  /** The typed objects of one YAML file (one or more documents). */
  static List<HasMetadata> read(Path file) {
    List<HasMetadata> objects = new ArrayList<>();
    try (var parser = YAML.getFactory().createParser(file.toFile())) {
      for (JsonNode node : YAML.readValues(parser, JsonNode.class).readAll()) {
        if (node == null || node.isNull()) {
          continue;
        }
        String kind = node.path("kind").asText();
        Class<? extends HasMetadata> type = TYPES.get(kind);
        if (type == null) {
          throw new AssertionError(file + ": unexpected kind '" + kind + "'");
        }
        HasMetadata object = YAML.treeToValue(node, type);
        requireKnownFields(object, file + " " + kind);
        objects.add(object);
      }
    } catch (IOException e) {
      throw new AssertionError(file + ": " + e.getMessage(), e);
    }
    return objects;
  }

  private static ConfigMap generate(Path dir, Generator generator) {
    Map<String, String> data = new LinkedHashMap<>();
    if (generator.literals() != null) {
      generator.literals().forEach(literal -> {
        int equals = literal.indexOf('=');
        data.put(literal.substring(0, equals), literal.substring(equals + 1));
      });
    }
    if (generator.files() != null) {
      for (String file : generator.files()) {
        int equals = file.indexOf('=');
        Path path = dir.resolve(equals < 0 ? file : file.substring(equals + 1));
        try {
          data.put(equals < 0 ? path.getFileName().toString() : file.substring(0, equals), Files.readString(path));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return new ConfigMapBuilder().withNewMetadata().withName(generator.name()).endMetadata().withData(data).build();
  }

  /**
   * fabric8 keeps a field its model does not know in {@code additionalProperties} instead of failing: walks the
   * object and fails on the first one.
   */
  static void requireKnownFields(Object value, String where) {
    if (value == null) {
      return;
    }
    if (value instanceof Collection<?> items) {
      items.forEach(item -> requireKnownFields(item, where));
      return;
    }
    if (value instanceof Map<?, ?> map) {
      map.values().forEach(item -> requireKnownFields(item, where));
      return;
    }
    if (!value.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Method getter : value.getClass().getMethods()) {
      if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
        || !getter.getName().startsWith("get") || getter.getDeclaringClass() == Object.class) {
        continue;
      }
      Object field;
      try {
        field = getter.invoke(value);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(e);
      }
      if (getter.getName().equals("getAdditionalProperties")) {
        if (field instanceof Map<?, ?> unknown && !unknown.isEmpty()) {
          throw new AssertionError(where + ": unknown field(s) " + unknown.keySet() + " in "
            + value.getClass().getSimpleName());
        }
      } else {
        requireKnownFields(field, where);
      }
    }
  }
}
