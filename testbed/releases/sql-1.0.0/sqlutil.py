"""sqlutil: the sql server's vendored helper (databases, CSV, upload)."""
import csv
import io
import re
import sqlite3
import urllib.parse
import urllib.request

VERSION = "1.0.0"


def pick(call):
    """The database item: args["db"], else the first item with data."""
    name = call.args.get("db") or next((n for n, it in call.items.items() if it.data), None)
    item = call.items.get(name) if name else None
    return name, (item if item is not None and item.data else None)


def run(data, sql, limit):
    db = sqlite3.connect(":memory:")
    try:
        db.deserialize(data)
        db.execute("PRAGMA query_only = ON")
        cur = db.execute(sql)
        cols = [d[0] for d in cur.description or []]
        return cols, [list(r) for r in cur.fetchmany(limit)]
    finally:
        db.close()


def csv_text(value):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(value["columns"])
    w.writerows(value["rows"])
    return buf.getvalue()


def post(url, body, ctype="text/csv"):
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": ctype})
    with urllib.request.urlopen(req, timeout=20) as r:
        r.read()
        return r.status


def upload(host, name, body):
    if not re.fullmatch(r"[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+", str(host)):
        raise ValueError("bad host %r" % host)
    return post("http://%s/upload?db=%s" % (host, urllib.parse.quote(name)), body)
