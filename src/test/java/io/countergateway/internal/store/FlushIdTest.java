package io.countergateway.internal.store;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The flush-id format: what the coalescer and the splits write is what the journal and the table read back. */
@DisplayName("Flush ids")
class FlushIdTest {

  @Test
  @DisplayName("an id as formed, and every half of it, is written as source:base36[.path] and reads back the same")
  void formatAndParseAgree() {
    FlushId formed = FlushId.formed("k3x9-0", 46_655);
    assertThat(formed).hasToString("k3x9-0:zzz");
    for (FlushId id : List.of(formed, formed.half(0), formed.half(1).half(0))) {
      assertThat(FlushId.parse(id.toString())).as(id.toString()).isEqualTo(id);
      assertThat(id.source()).isEqualTo("k3x9-0");
      assertThat(id.sequence()).isEqualTo(46_655);
    }
    assertThat(formed.half(1).half(0)).hasToString("k3x9-0:zzz.10");
    assertThat(formed.isSplit()).isFalse();
    assertThat(formed.half(0).isSplit()).isTrue();
  }

  @Test
  @DisplayName("text that is not an id is refused, never read as some other flush")
  void foreignIds() {
    assertThatThrownBy(() -> FlushId.parse("manual")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FlushId.parse("s:not-base36!")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FlushId.parse("s:1.2")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FlushId.formed("a:b", 1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("ids of nested splits stay apart from every id a later flush can have, and within the id column")
  void splitIdsNeverMeetFormedIds() {
    Set<String> ids = new HashSet<>();
    List<FlushId> frontier = List.of(FlushId.formed("s-0", 1));
    for (int depth = 0; depth < 14; depth++) {
      List<FlushId> next = new ArrayList<>();
      for (FlushId id : frontier) {
        next.add(id.half(0));
        next.add(id.half(1));
      }
      next.forEach(id -> assertThat(ids.add(id.toString())).as(id.toString()).isTrue());
      frontier = depth < 3 ? next : next.subList(0, 2);
    }
    for (long sequence = 0; sequence < 100_000; sequence++) {
      assertThat(ids).doesNotContain(FlushId.formed("s-0", sequence).toString());
    }
    assertThat(ids).allMatch(id -> id.length() <= 64 - 13);
  }
}
