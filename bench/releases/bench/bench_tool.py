"""The release of bench/run.sh (make bench; issue 4 "Benchmark").

noop            returns None: the cost of a call itself.
stats           mean and standard deviation of the numbers in each item.
summarize       the first lines of each item (bench/run.sh calls it with one
                consumer: one copy).
summarize_many  the same, called with three consumers of different
                clearances over labelled items: Plan yields three groups,
                hence three copies.
hold            sleeps args["seconds"] (default 0.5), so that the benchmark
                can read the memory of a live copy.
"""
import statistics
import time


def noop(call):
    return None


def stats(call):
    out = {}
    for name, item in call.items.items():
        xs = [float(t) for t in item.data.split()]
        out[name] = {"n": len(xs),
                     "mean": statistics.fmean(xs) if xs else None,
                     "stdev": statistics.stdev(xs) if len(xs) > 1 else None}
    return out


def _first_lines(call, n=3):
    out = {}
    for name, item in call.items.items():
        text = item.data.decode("utf-8", "replace")
        out[name] = text.splitlines()[:n]
    return out


def summarize(call):
    return _first_lines(call)


def summarize_many(call):
    return _first_lines(call)


def hold(call):
    time.sleep(float(call.args.get("seconds", 0.5)))
    return None
