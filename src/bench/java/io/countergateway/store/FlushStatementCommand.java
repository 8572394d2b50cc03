package io.countergateway.store;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code java -jar target/counter-gateway-bench.jar flush-statement --table T}: the gateway's own PostgreSQL flush
 * statement (flush-id and fence CTEs included) as a pgbench script line, its parameters turned into pgbench variables,
 * so the database-alone row of the benchmarks runs exactly what the gateway sends and cannot drift from it. In this
 * package because the statement is the store's, and not public there.
 */
@Command(name = "flush-statement", mixinStandardHelpOptions = true,
  description = "Prints the gateway's PostgreSQL flush statement for pgbench: :types :ids :slots :deltas (array "
    + "literals), :flush_id, :source and :sequence in place of its parameters.")
public final class FlushStatementCommand implements Callable<Integer> {
  /** pgbench's names for the statement's parameters, in the order the gateway binds them ($1 … $7). */
  static final String[] VARIABLES = {"types", "ids", "slots", "deltas", "flush_id", "source", "sequence"};
  private static final Pattern PARAMETER = Pattern.compile("\\$(\\d+)");

  @Option(names = "--table", defaultValue = "slotted_counters", description = "the counters table (default: ${DEFAULT-VALUE})")
  private String table;

  @Override
  public Integer call() {
    System.out.println(forPgbench(table));
    return 0;
  }

  /** One line (pgbench reads a statement up to the end of its line), each $n as :name. */
  static String forPgbench(String table) {
    Matcher parameter = PARAMETER.matcher(new PostgresSql(table, true).upsertFlush);
    StringBuilder script = new StringBuilder();
    while (parameter.find()) {
      parameter.appendReplacement(script, ":" + VARIABLES[Integer.parseInt(parameter.group(1)) - 1]);
    }
    parameter.appendTail(script);
    return script.toString().replaceAll("\\s+", " ").strip() + ";";
  }
}
