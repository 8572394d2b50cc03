package io.countergateway;

import io.countergateway.config.ConfigException;
import io.countergateway.config.GatewayConfig;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library's public API, as an application that embeds the gateway sees it (docs/library.md): the entry types and
 * every type of ours their public members name, transitively. A change to it is a change for every library user, so
 * it is made on purpose: the test fails on any difference from {@code src/test/resources/public-api.txt}, and
 * {@code -Dpublic.api.write=true} rewrites that file for the commit that means it. The API lives in two packages, the
 * root and {@code config}; every other public type is under {@code io.countergateway.internal}, which may change in
 * any release, so a user can tell from an import alone what the API promises.
 */
@DisplayName("The library's public API")
class PublicApiTest {
  private static final Path SNAPSHOT = Path.of("src/test/resources/public-api.txt");
  private static final Set<String> API_PACKAGES = Set.of("io.countergateway", "io.countergateway.config");
  private static final String INTERNAL = "io.countergateway.internal.";
  /** The runnable jar's entry point: public for {@code java -jar}, not for an application to call. */
  private static final Set<Class<?>> PUBLIC_NOT_API = Set.of(Main.class);
  private static final List<Class<?>> ENTRIES = List.of(Gateway.class, GatewayConfig.class, CounterClient.class,
    InTransactionCounters.class, CounterException.class, ConfigException.class);

  @Test
  @DisplayName("changes only on purpose: it is the snapshot checked in beside the tests")
  void unchangedUnlessMeant() throws IOException {
    String current = String.join("\n", surface()) + "\n";
    if (Boolean.getBoolean("public.api.write")) {
      Files.writeString(SNAPSHOT, current);
    }
    assertThat(current).as("the public API (rewrite %s with -Dpublic.api.write=true if the change is meant)", SNAPSHOT)
      .isEqualTo(Files.readString(SNAPSHOT));
  }

  @Test
  @DisplayName("lives in the root package and config: every other public type is under io.countergateway.internal")
  void everythingElseIsInternal() throws Exception {
    List<String> outside = publicTypes().stream().map(Class::getName)
      .filter(name -> !API_PACKAGES.contains(packageOf(name)) && !name.startsWith(INTERNAL)).toList();
    assertThat(outside).as("public types neither in %s nor under %s", API_PACKAGES, INTERNAL).isEmpty();
  }

  @Test
  @DisplayName("the root package's public types are the API's own: a helper placed there is not published by mistake")
  void rootHoldsOnlyTheApi() throws Exception {
    Set<String> api = surface().stream().map(line -> line.substring(0, line.indexOf(' '))).collect(Collectors.toSet());
    List<String> unlisted = publicTypes().stream().filter(type -> type.getPackageName().equals("io.countergateway"))
      .filter(type -> !PUBLIC_NOT_API.contains(type) && !api.contains(type.getName())).map(Class::getName).toList();
    assertThat(unlisted).as("public root types the entry types do not reach (make them package-private or internal)")
      .isEmpty();
  }

  /** The public top-level types compiled from src/main/java. */
  private static List<Class<?>> publicTypes() throws Exception {
    Path classes = Path.of(Gateway.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<Class<?>> types = new ArrayList<>();
    try (Stream<Path> files = Files.walk(classes)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".class") && !f.getFileName().toString().contains("$"))
        .toList()) {
        String relative = classes.relativize(file).toString();
        String name = relative.substring(0, relative.length() - ".class".length()).replace(file.getFileSystem()
          .getSeparator(), ".");
        Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
        if (Modifier.isPublic(type.getModifiers())) {
          types.add(type);
        }
      }
    }
    assertThat(types).as("public types found in %s", classes).contains(Gateway.class);
    return types;
  }

  private static String packageOf(String name) {
    return name.substring(0, name.lastIndexOf('.'));
  }

  /** One line per public type, constructor, method and field reachable from the entry types. */
  static Set<String> surface() {
    Set<String> lines = new TreeSet<>();
    Set<Class<?>> seen = new java.util.HashSet<>();
    Deque<Class<?>> next = new ArrayDeque<>(ENTRIES);
    while (!next.isEmpty()) {
      Class<?> type = next.poll();
      if (!seen.add(type) || !ours(type) || !Modifier.isPublic(type.getModifiers())) {
        continue;
      }
      lines.add(type.getName() + " " + kind(type));
      List<Type> named = new ArrayList<>();
      for (Constructor<?> constructor : type.getConstructors()) {
        lines.add(type.getName() + " new" + parameters(constructor));
        named.addAll(Arrays.asList(constructor.getGenericParameterTypes()));
      }
      for (Method method : type.getMethods()) {
        if (method.getDeclaringClass() == Object.class || method.isSynthetic() || method.isBridge()) {
          continue;
        }
        lines.add(type.getName() + " " + (Modifier.isStatic(method.getModifiers()) ? "static " : "")
          + method.getGenericReturnType().getTypeName() + " " + method.getName() + parameters(method));
        named.add(method.getGenericReturnType());
        named.addAll(Arrays.asList(method.getGenericParameterTypes()));
      }
      for (Field field : type.getFields()) {
        lines.add(type.getName() + " field " + field.getGenericType().getTypeName() + " " + field.getName());
        named.add(field.getGenericType());
      }
      Arrays.stream(type.getClasses()).forEach(next::add);
      named.forEach(t -> classesIn(t, next));
    }
    return lines;
  }

  private static boolean ours(Class<?> type) {
    return type.getName().startsWith("io.countergateway.");
  }

  private static String kind(Class<?> type) {
    return type.isRecord() ? "record" : type.isEnum() ? "enum" : type.isInterface() ? "interface" : "class";
  }

  private static String parameters(Executable executable) {
    return Arrays.stream(executable.getGenericParameterTypes()).map(Type::getTypeName)
      .collect(Collectors.joining(", ", "(", ")"));
  }

  private static void classesIn(Type type, Deque<Class<?>> into) {
    if (type instanceof Class<?> c) {
      into.add(c.isArray() ? c.getComponentType() : c);
    } else if (type instanceof ParameterizedType p) {
      classesIn(p.getRawType(), into);
      Arrays.stream(p.getActualTypeArguments()).forEach(argument -> classesIn(argument, into));
    }
  }
}
