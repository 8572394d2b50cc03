package io.countergateway.internal.write.journal;

import io.countergateway.internal.write.journal.ReplayReport.Dropped;
import io.countergateway.internal.write.journal.ReplayReport.Skipped;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("What a replay reports")
class ReplayReportTest {
  private static ReplayReport report(Skipped damaged, Skipped tail, List<String> reconstructed, Dropped dropped) {
    return new ReplayReport(2, 100, 4_096, damaged, tail, reconstructed, dropped);
  }

  @Test
  @DisplayName("a clean replay says so, and nothing can have been lost")
  void clean() {
    ReplayReport report = report(Skipped.NONE, Skipped.NONE, List.of(), Dropped.NONE);
    assertThat(report.describe()).isEqualTo("journal replayed");
    assertThat(report.mayHaveLost()).isFalse();
  }

  @Test
  @DisplayName("damage in the middle is told with its bytes, frames and readable increments, as possibly answered")
  void damagedInTheMiddle() {
    ReplayReport report = report(new Skipped(38, 1, 1, true), Skipped.NONE, List.of(), Dropped.NONE);
    assertThat(report.describe()).isEqualTo("journal replayed; 38 damaged bytes in the middle were skipped (1 frames, 1 "
      + "increments readable in them): written before frames answered after them, they can have held increments "
      + "already answered, which are lost");
    assertThat(report.mayHaveLost()).isTrue();
    assertThat(report(new Skipped(0, 1, 0, true), Skipped.NONE, List.of(), Dropped.NONE).mayHaveLost())
      .as("a frame lost by its number alone").isTrue();
  }

  @Test
  @DisplayName("a torn tail under fsync always was never answered: told, but not as a loss")
  void tornTail() {
    ReplayReport never = report(Skipped.NONE, new Skipped(36, 1, 0, false), List.of(), Dropped.NONE);
    assertThat(never.describe()).isEqualTo("journal replayed; a frame cut short at the end was dropped (36 bytes, 0 "
      + "increments readable, never answered under fsync always)");
    assertThat(never.mayHaveLost()).isFalse();
    ReplayReport maybe = report(Skipped.NONE, new Skipped(36, 1, 2, true), List.of(), Dropped.NONE);
    assertThat(maybe.describe()).endsWith("(36 bytes, 2 increments readable; under fsync everyMs or off, or whole but "
      + "damaged, it can have been answered)");
    assertThat(maybe.mayHaveLost()).isTrue();
    assertThat(report(Skipped.NONE, new Skipped(0, 0, 0, true), List.of(), Dropped.NONE).mayHaveLost())
      .as("no tail at all").isFalse();
  }

  @Test
  @DisplayName("deltas handed over under a hidden flush's id, and deltas dropped, are told with their counts")
  void setAside() {
    ReplayReport reconstructed = report(Skipped.NONE, Skipped.NONE, List.of("s:1", "s:2"), Dropped.NONE);
    assertThat(reconstructed.describe()).isEqualTo("journal replayed; the damage hid the record of flush s:1, s:2: the "
      + "deltas pending before it are written again under that id, which writes nothing if it had committed");
    assertThat(reconstructed.mayHaveLost()).isTrue();
    ReplayReport dropped = report(Skipped.NONE, Skipped.NONE, List.of(), new Dropped(3, 12));
    assertThat(dropped.describe()).isEqualTo("journal replayed; 3 counters (12 in all) were pending before a damaged "
      + "region that hid flush records: they may be in a committed flush, so they are not written (at most lost, "
      + "never counted twice)");
    assertThat(dropped.mayHaveLost()).isTrue();
  }

  @Test
  @DisplayName("two streams' reports add up")
  void plus() {
    ReplayReport one = new ReplayReport(1, 10, 100, new Skipped(1, 1, 1, false), new Skipped(2, 1, 0, false),
      List.of("a:1"), new Dropped(1, 2));
    ReplayReport two = new ReplayReport(2, 20, 200, new Skipped(3, 2, 1, true), new Skipped(4, 1, 1, true),
      List.of("b:1"), new Dropped(2, 3));
    assertThat(one.plus(two)).isEqualTo(new ReplayReport(3, 30, 300, new Skipped(4, 3, 2, true),
      new Skipped(6, 2, 1, true), List.of("a:1", "b:1"), new Dropped(3, 5)));
  }
}
