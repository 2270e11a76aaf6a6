"""sql 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the SQL server,
flow-compliant.

- query: runs args["sql"] read-only over the SQLite database held by the
  item args["db"] (else the first item with data), loaded into memory with
  sqlite3's deserialize (no path is writable); returns {"db", "columns",
  "rows"}.
- share: the same query; POSTs its result as CSV to
  http://<args["to"]>/upload?db=NAME (a host the call declares in its
  "destinations", e.g. a mail recipient's); returns the query's value and
  the reply's status.
"""
import sqlutil


def query(call):
    return _result(call)


def share(call):
    out = _result(call)
    status = sqlutil.upload(call.args["to"], out["db"] or "", sqlutil.csv_text(out).encode())
    return dict(out, to=call.args["to"], status=status)


def _result(call):
    name, item = sqlutil.pick(call)
    if item is None:
        return {"db": name, "columns": [], "rows": []}
    cols, rows = sqlutil.run(item.data, call.args.get("sql", "SELECT name FROM sqlite_master"),
                             int(call.args.get("limit", 1000)))
    return {"db": name, "columns": cols, "rows": rows}

