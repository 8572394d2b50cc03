package io.countergateway.internal.write;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.write.journal.Journal;
import io.vertx.core.Future;

import java.util.List;

/** The journal's records of flushes, as the flush writer and the flush sources need them. */
final class JournalFlushLog implements FlushLog {
  private final Journal journal;

  JournalFlushLog(Journal journal) {
    this.journal = journal;
  }

  @Override
  public Future<Void> formed(Flush flush, List<CounterKey> zeroKeys) {
    return journal.formed(flush, zeroKeys);
  }

  @Override
  public Future<Void> replaced(Flush parent, List<Flush> children) {
    return journal.replaced(parent, children);
  }

  @Override
  public Future<Void> beforeSend(FlushId id) {
    return journal.beforeSend(id.toString());
  }

  @Override
  public void notSent(FlushId id) {
    journal.notSent(id.toString());
  }

  @Override
  public void settled(FlushId formed) {
    journal.settled(formed.toString());
  }

  @Override
  public Future<Void> force() {
    return journal.force();
  }

  @Override
  public boolean failed() {
    return journal.failed();
  }
}
