package io.countergateway.internal.store;

/**
 * The statements on the windows table (schema step 006) that both dialects run alike, with plain positional
 * arguments: one counter's buckets, top-N, retention's batched delete and oldest bucket, and a counter's reset; and
 * {@code plainTop}, top-N of a plain namespace over the plain table's slots (type, count).
 */
record WindowStatements(String buckets, String top, String expire, String oldest, String reset, String plainTop) {
}
