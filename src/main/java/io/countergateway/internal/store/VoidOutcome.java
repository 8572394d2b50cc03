package io.countergateway.internal.store;

/**
 * What {@link CounterStore#voidFlush} found: the flush id can now never commit, or an earlier attempt (a late copy that
 * reached the database after the gateway gave up on it) had committed the flush whole.
 */
public enum VoidOutcome { VOIDED, ALREADY_COMMITTED }
