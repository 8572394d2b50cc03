package io.countergateway;

import java.util.Objects;

/** One counter: its namespace ({@code type}, declared under {@code namespaces}) and the id of what it counts. */
public record Counter(String type, String id) {
  public Counter {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(id, "id");
  }
}
