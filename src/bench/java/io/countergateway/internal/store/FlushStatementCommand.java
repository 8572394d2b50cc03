package io.countergateway.internal.store;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code java -jar target/counter-gateway-bench.jar flush-statement --table T}: the gateway's own flush statements for
 * the database-alone rows of the benchmarks, so those run exactly what the gateway sends and cannot drift from it. In
 * this package because the statements are the store's, and not public there.
 * <ul>
 *   <li>PostgreSQL (default): the flush statement (flush-id and fence CTEs included) as a pgbench script line, its
 *   parameters turned into pgbench variables.</li>
 *   <li>{@code --dialect mysql}: {@code --flushes} flushes of {@code --rows} counters as the MySQL store writes them
 *   (one call of the flush procedure: the source's fence held shared, the flush id, the upserts, in one transaction),
 *   the values written in, for the mysql client to run one after another: the client has no pgbench.</li>
 * </ul>
 */
@Command(name = "flush-statement", mixinStandardHelpOptions = true,
  description = "Prints the gateway's flush statement: for pgbench (:types :ids :slots :deltas as array literals, "
    + ":flush_id, :source and :sequence in place of its parameters), or MySQL flush calls to pipe into mysql.")
public final class FlushStatementCommand implements Callable<Integer> {
  /** pgbench's names for the statement's parameters, in the order the gateway binds them ($1 … $7). */
  static final String[] VARIABLES = {"types", "ids", "slots", "deltas", "flush_id", "source", "sequence"};
  private static final Pattern PARAMETER = Pattern.compile("\\$(\\d+)");

  @Option(names = "--table", defaultValue = "slotted_counters", description = "the counters table (default: ${DEFAULT-VALUE})")
  private String table;

  @Option(names = "--dialect", defaultValue = "postgres", description = "postgres or mysql (default: ${DEFAULT-VALUE})")
  private String dialect;

  @Option(names = "--rows", defaultValue = "1", description = "mysql: counters per flush (default: ${DEFAULT-VALUE})")
  private int rows;

  @Option(names = "--flushes", defaultValue = "1", description = "mysql: flush transactions (default: ${DEFAULT-VALUE})")
  private int flushes;

  @Option(names = "--source", defaultValue = "alone", description = "mysql: the flush source, registered (default: ${DEFAULT-VALUE})")
  private String source;

  @Option(names = "--slot", defaultValue = "0", description = "mysql: the slot every row writes (default: ${DEFAULT-VALUE})")
  private int slot;

  @Option(names = "--type", defaultValue = "alone", description = "mysql: the rows' record_type (default: ${DEFAULT-VALUE})")
  private String type;

  @Override
  public Integer call() {
    if (dialect.equals("mysql")) {
      StringBuilder out = new StringBuilder();
      for (int flush = 1; flush <= flushes; flush++) {
        out.append(mySqlTransaction(table, source, flush, type, rows, slot)).append('\n');
        if (out.length() > 1 << 16) {
          System.out.print(out);
          out.setLength(0);
          if (System.out.checkError()) {
            return 0; // the client was stopped at the end of its run: nothing more to write
          }
        }
      }
      System.out.print(out);
    } else {
      System.out.println(forPgbench(table));
    }
    return 0;
  }

  /** One line (pgbench reads a statement up to the end of its line), each $n as :name. */
  static String forPgbench(String table) {
    Matcher parameter = PARAMETER.matcher(new PostgresSql(table).upsertFlush);
    StringBuilder script = new StringBuilder();
    while (parameter.find()) {
      parameter.appendReplacement(script, ":" + VARIABLES[Integer.parseInt(parameter.group(1)) - 1]);
    }
    parameter.appendTail(script);
    return script.toString().replaceAll("\\s+", " ").strip() + ";";
  }

  /** A flush of {@code rows} counters {@code c-0000000 …} by delta 1, as the MySQL store sends it: one call. */
  static String mySqlTransaction(String table, String source, long sequence, String type, int rows, int slot) {
    MySqlSql sql = new MySqlSql(table);
    List<FlushRow> flushRows = new java.util.ArrayList<>();
    for (int row = 0; row < rows; row++) {
      flushRows.add(new FlushRow(type, "c-%07d".formatted(row), (short) slot, 1));
    }
    return bind(sql.writeFlush, source + ":" + sequence, source, sequence, MySqlSql.plainRows(flushRows),
      MySqlSql.windowRows(flushRows)) + ";";
  }

  /** The statement with each ? replaced by its value: numbers as they are, strings quoted (ours need no escaping). */
  private static String bind(String statement, Object... values) {
    StringBuilder bound = new StringBuilder();
    int next = 0;
    for (char c : statement.toCharArray()) {
      if (c == '?') {
        Object value = values[next++];
        bound.append(value instanceof String ? "'" + value + "'" : value);
      } else {
        bound.append(c);
      }
    }
    if (next != values.length) {
      throw new IllegalArgumentException(values.length + " values for " + next + " parameters");
    }
    return bound.toString();
  }
}
