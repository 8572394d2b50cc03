package io.countergateway.internal.store;

/** What a flush write found: it committed now, or its id shows an earlier attempt had committed. */
public enum WriteOutcome { COMMITTED, ALREADY_COMMITTED }
