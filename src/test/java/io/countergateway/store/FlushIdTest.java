package io.countergateway.store;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The flush-id format: what the coalescer and the splits write is what the fence reads back. */
@DisplayName("Flush ids")
class FlushIdTest {

  @Test
  @DisplayName("an id as formed, and every half of it, reads back as its source and sequence")
  void formatAndParseAgree() {
    String formed = FlushId.formed("k3x9-0", 46_655);
    assertThat(formed).isEqualTo("k3x9-0:zzz");
    for (String id : List.of(formed, FlushId.half(formed, 0), FlushId.half(FlushId.half(formed, 1), 0))) {
      assertThat(FlushId.source(id)).as(id).isEqualTo("k3x9-0");
      assertThat(FlushId.sequence(id)).as(id).isEqualTo(46_655);
    }
    assertThat(FlushId.half(FlushId.half(formed, 1), 0)).isEqualTo("k3x9-0:zzz.10");
  }

  @Test
  @DisplayName("an id written by hand is its own source when it has no ':', and of sequence 0 when it has no base-36 one")
  void foreignIds() {
    assertThat(FlushId.source("manual")).isEqualTo("manual");
    assertThat(FlushId.sequence("s:not-base36!")).isZero();
  }

  @Test
  @DisplayName("ids of nested splits stay apart from every id a later flush can have, and within the id column")
  void splitIdsNeverMeetFormedIds() {
    Set<String> ids = new HashSet<>();
    List<String> frontier = List.of(FlushId.formed("s-0", 1));
    for (int depth = 0; depth < 14; depth++) {
      List<String> next = new ArrayList<>();
      for (String id : frontier) {
        next.add(FlushId.half(id, 0));
        next.add(FlushId.half(id, 1));
      }
      next.forEach(id -> assertThat(ids.add(id)).as(id).isTrue());
      frontier = depth < 3 ? next : next.subList(0, 2);
    }
    for (long sequence = 0; sequence < 100_000; sequence++) {
      assertThat(ids).doesNotContain(FlushId.formed("s-0", sequence));
    }
    assertThat(ids).allMatch(id -> id.length() <= 64 - 13);
  }
}
