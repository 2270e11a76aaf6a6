"""sql 1.0.0 (testbed/releases; docs/testbed.md "Releases"): the SQL server,
flow-compliant.

- query: runs args["sql"] read-only over the SQLite database held by the
  item args["db"] (else the first item with data), loaded into memory with
  sqlite3's deserialize (no path is writable); returns {"columns", "rows"}.
"""
import sqlite3


def _open(data):
    db = sqlite3.connect(":memory:")
    db.deserialize(data)
    db.execute("PRAGMA query_only = ON")
    return db


def query(call):
    name = call.args.get("db") or next((n for n, it in call.items.items() if it.data), None)
    item = call.items.get(name) if name else None
    if item is None or not item.data:
        return {"db": name, "columns": [], "rows": []}
    db = _open(item.data)
    try:
        cur = db.execute(call.args.get("sql", "SELECT name FROM sqlite_master"))
        cols = [d[0] for d in cur.description or []]
        rows = [list(r) for r in cur.fetchmany(int(call.args.get("limit", 1000)))]
    finally:
        db.close()
    return {"db": name, "columns": cols, "rows": rows}
