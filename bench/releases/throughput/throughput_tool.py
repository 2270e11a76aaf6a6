"""bench/throughput.sh's release (issue 19, "Must show": throughput of
independent CPU-bound calls): `burn` is pure Python arithmetic, about
50-100 ms on this machine at the default n, with no items, no state and no
destination, so calls share nothing and may all run at once."""


def burn(call):
    n = max(1, min(20_000_000, int(call.args.get("n", 600_000))))
    s = 0
    for i in range(n):
        s = (s + i * i) % 1_000_003
    return s
