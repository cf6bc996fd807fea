#!/usr/bin/python3 -I
# Reference (information only): Python's zoneinfo computing every user's next remind_at instant
# strictly after meta.json's "now", and the quarter's due count, in a plain loop.
#   /usr/bin/python3 -I Benchmarks/references/zoneinfo.py DIR
# users.csv is read first (not timed); the loop is timed with time.perf_counter, one ZoneInfo per
# zone (cached). Wall times use fold=0, Python's default and streakd's rule: a time in a gap moves
# forward by the gap, one in a fold takes the first occurrence. One JSON line on stdout.
# (-I keeps this file, named zoneinfo.py, from shadowing the standard module.)
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]

import csv  # noqa: E402
import datetime as dt  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import zoneinfo  # noqa: E402


def rfc3339(text):
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: zoneinfo.py DIR")
    data = sys.argv[1]
    with open(os.path.join(data, "meta.json")) as f:
        meta = json.load(f)
    now, q0, q1 = (rfc3339(meta[k]) for k in ("now", "quarter_start", "quarter_end"))
    now_s, q0_s, q1_s = now.timestamp(), q0.timestamp(), q1.timestamp()
    with open(os.path.join(data, "users.csv"), newline="") as f:
        rows = csv.reader(f)
        if next(rows) != ["user", "tz", "remind_at"]:
            sys.exit("zoneinfo.py: unexpected users.csv header")
        users = [(tz, int(at[:2]), int(at[3:5])) for _, tz, at in rows]
    print(f"zoneinfo.py: {len(users)} users read", file=sys.stderr)

    start = time.perf_counter()
    zones = {}
    day = dt.timedelta(days=1)
    due = 0
    checksum = 0
    for tz, hour, minute in users:
        zone = zones.get(tz)
        if zone is None:
            zone = zones[tz] = zoneinfo.ZoneInfo(tz)
        local = now.astimezone(zone).date()
        nxt = dt.datetime(local.year, local.month, local.day, hour, minute, tzinfo=zone).timestamp()
        if nxt <= now_s:
            local += day
            nxt = dt.datetime(local.year, local.month, local.day, hour, minute, tzinfo=zone).timestamp()
        if q0_s <= nxt < q1_s:
            due += 1
        checksum += int(nxt)
    seconds = time.perf_counter() - start

    print(json.dumps({
        "measure": "planning", "subject": "python-zoneinfo", "seconds": round(seconds, 4),
        "items": len(users), "due": due, "checksum": checksum, "zones": len(zones),
        "how": "time.perf_counter around the loop, one run; ZoneInfo cached per zone; fold=0",
    }, separators=(",", ":")))


main()
