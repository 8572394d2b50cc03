package io.countergateway.bench;

import java.util.List;

/** The strategies by name, in the order the table lists them. */
public final class Strategies {
  /** Every strategy, in run order: the hand-written ones, the gateway, the references. */
  public static final List<String> DEFAULT = List.of("single-row", "multi-row", "slotted", "skip-locked", "ledger",
    "gateway-http", "gateway-http-batch", "gateway-bus", "gateway-bus-batch", "gateway-bus-accepted", "redis",
    "plain-204");

  private Strategies() {
  }

  static void check(String name) {
    if (!DEFAULT.contains(name)) {
      throw new IllegalArgumentException("unknown strategy '" + name + "'; choose from " + String.join(", ", DEFAULT));
    }
  }

  static Strategy create(String name, BenchContext ctx) {
    return switch (name) {
      case "single-row" -> new SingleRowUpdate(ctx);
      case "multi-row" -> new MultiRowRandomUpdate(ctx);
      case "slotted" -> new SlottedUpsert(ctx);
      case "skip-locked" -> new SkipLockedSlots(ctx);
      case "ledger" -> new LedgerWithFold(ctx);
      case "gateway-http" -> new GatewayHttp(ctx, 1);
      case "gateway-http-batch" -> new GatewayHttp(ctx, ctx.options().batchSize());
      case "gateway-bus" -> new GatewayBus(ctx, 1);
      case "gateway-bus-batch" -> new GatewayBus(ctx, ctx.options().batchSize());
      case "gateway-bus-accepted" -> GatewayBus.accepted(ctx);
      case "redis" -> new RedisIncrby(ctx);
      case "plain-204" -> new Plain204(ctx);
      default -> throw new IllegalArgumentException("unknown strategy '" + name + "'");
    };
  }
}
