package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.apache.commons.text.similarity.LevenshteinDistance;

import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Every key the option classes asked for while reading one configuration tree. A key nobody asked for is a
 * mistake (a typo, a key of another version), so the known keys are whatever the code reads: a new option read
 * through {@link ConfigSection} is known without being listed anywhere else.
 */
final class ConfigKeys {
  private final Set<String> values = new LinkedHashSet<>();
  private final Set<String> sections = new HashSet<>();

  void askedForValue(String key) {
    values.add(key);
  }

  void askedForSection(String key) {
    sections.add(key);
  }

  /** The dotted keys of every value asked for, present in the tree or not. */
  public Set<String> values() {
    return values;
  }

  /** Throws for the first key of {@code tree} that no option read, naming the nearest key that one did. */
  void rejectUnknown(JsonObject tree, String prefix) {
    for (String name : tree.fieldNames()) {
      String key = prefix.isEmpty() ? name : prefix + "." + name;
      if (values.contains(key) || tree.getValue(name) == null && sections.contains(key)) {
        // a known section left empty (every key of it commented out in YAML reads as null) holds nothing unknown
        continue;
      }
      if (tree.getValue(name) instanceof JsonObject child && (sections.contains(key) || !child.isEmpty())) {
        rejectUnknown(child, key);
      } else {
        throw unknown(key, tree.getValue(name));
      }
    }
  }

  /** An unknown key; one that was renamed or retired says what to write instead. */
  private ConfigException unknown(String key, Object value) {
    ConfigDef.Former former = ConfigDef.former(key);
    if (former != null) {
      return new ConfigException(key, former.refusal(key, value));
    }
    String nearest = nearest(key, values);
    return new ConfigException(key, "unknown key" + (nearest == null ? "" : " (did you mean " + nearest + "?)"));
  }

  /** The candidate closest to {@code word} by edit distance, or null when there is none. */
  public static String nearest(String word, Collection<String> candidates) {
    LevenshteinDistance distance = LevenshteinDistance.getDefaultInstance();
    return candidates.stream()
      .min(Comparator.comparingInt((String candidate) -> distance.apply(word, candidate)).thenComparing(candidate -> candidate))
      .orElse(null);
  }
}
