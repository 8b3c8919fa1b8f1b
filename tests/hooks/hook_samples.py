"""Source code for the hook tests' repositories: a small, varied corpus and planted copies."""

from __future__ import annotations

import re

PARSE_CONFIG = '''\
def parse_config(path, defaults):
    """Read ``key = value`` lines into a dict, on top of the defaults."""
    result = dict(defaults)
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise ValueError(f"{path}:{number}: expected key = value")
            key, value = line.split("=", 1)
            result[key.strip().lower()] = value.strip()
    return result
'''

# The same function with every local renamed and one statement changed: a near-copy.
LOAD_SETTINGS = '''\
def load_settings(filename, base):
    """Settings from a file of ``name = value`` lines."""
    settings = dict(base)
    with open(filename, encoding="utf-8") as stream:
        for lineno, text in enumerate(stream, 1):
            text = text.strip()
            if not text or text.startswith(";"):
                continue
            if "=" not in text:
                raise ValueError(f"{filename}:{lineno}: expected name = value")
            name, value = text.split("=", 1)
            settings[name.strip().lower()] = value.strip()
    return settings
'''

MODULES = {
    "app/config.py": "import os\n\n\n"
    + PARSE_CONFIG
    + '''

def config_path(name):
    """Where the named configuration lives."""
    home = os.environ.get("APP_HOME", os.path.expanduser("~/.app"))
    return os.path.join(home, f"{name}.conf")
''',
    "app/matrix.py": '''\
class Matrix:
    """A dense matrix of floats, stored row by row."""

    def __init__(self, rows, cols, fill=0.0):
        self.rows = rows
        self.cols = cols
        self.data = [[fill] * cols for _ in range(rows)]

    def __matmul__(self, other):
        if self.cols != other.rows:
            raise ValueError("shapes do not match")
        out = Matrix(self.rows, other.cols)
        for i in range(self.rows):
            for j in range(other.cols):
                out.data[i][j] = sum(self.data[i][k] * other.data[k][j] for k in range(self.cols))
        return out

    def transpose(self):
        out = Matrix(self.cols, self.rows)
        for i, row in enumerate(self.data):
            for j, value in enumerate(row):
                out.data[j][i] = value
        return out
''',
    "app/cache.py": '''\
import time
from collections import OrderedDict


class TimedCache:
    """Keeps at most ``size`` entries, each for ``ttl`` seconds."""

    def __init__(self, size=128, ttl=60.0, clock=time.monotonic):
        self.size = size
        self.ttl = ttl
        self.clock = clock
        self._items = OrderedDict()

    def get(self, key, default=None):
        item = self._items.get(key)
        if item is None:
            return default
        stamp, value = item
        if self.clock() - stamp > self.ttl:
            del self._items[key]
            return default
        self._items.move_to_end(key)
        return value

    def put(self, key, value):
        self._items[key] = (self.clock(), value)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
''',
    "app/report.py": '''\
import csv
import statistics


def summarize(path, column):
    """Count, mean and spread of one numeric column of a CSV file."""
    values = []
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            try:
                values.append(float(row[column]))
            except (KeyError, ValueError):
                continue
    if not values:
        return {"count": 0}
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "stdev": statistics.pstdev(values),
        "min": min(values),
        "max": max(values),
    }


def render(summary):
    width = max(len(k) for k in summary)
    return "\\n".join(f"{k.ljust(width)}  {v}" for k, v in sorted(summary.items()))
''',
    "app/words.py": '''\
import re
from collections import Counter

WORD = re.compile(r"[A-Za-z']+")


def top_words(text, n=10, stop=frozenset()):
    """The n most frequent words of a text, lower-cased, stop words left out."""
    counts = Counter(w.lower() for w in WORD.findall(text) if w.lower() not in stop)
    return counts.most_common(n)


def wrap(text, width):
    lines, current = [], []
    for word in text.split():
        if current and sum(map(len, current)) + len(current) + len(word) > width:
            lines.append(" ".join(current))
            current = []
        current.append(word)
    if current:
        lines.append(" ".join(current))
    return lines
''',
    "app/dates.py": '''\
import datetime as dt


def business_days(start, end, holidays=()):
    """Working days from start to end inclusive, weekends and holidays excluded."""
    if end < start:
        start, end = end, start
    day = start
    count = 0
    skip = set(holidays)
    while day <= end:
        if day.weekday() < 5 and day not in skip:
            count += 1
        day += dt.timedelta(days=1)
    return count


def quarter(day):
    return (day.month - 1) // 3 + 1
''',
}

UNRELATED = '''\
import heapq


def dijkstra(graph, source):
    """Shortest distances from source in a graph of {node: [(neighbour, weight)]}."""
    best = {source: 0}
    queue = [(0, source)]
    while queue:
        cost, node = heapq.heappop(queue)
        if cost > best.get(node, float("inf")):
            continue
        for neighbour, weight in graph.get(node, ()):
            candidate = cost + weight
            if candidate < best.get(neighbour, float("inf")):
                best[neighbour] = candidate
                heapq.heappush(queue, (candidate, neighbour))
    return best
'''

OTHER_UNRELATED = '''\
def run_length(text):
    """Run-length encoding: "aaab" becomes [("a", 3), ("b", 1)]."""
    out = []
    for char in text:
        if out and out[-1][0] == char:
            out[-1] = (char, out[-1][1] + 1)
        else:
            out.append((char, 1))
    return out


def expand(pairs):
    return "".join(char * count for char, count in pairs)
'''

LINE = re.compile(
    r"^(?P<other>.+?):(?P<oline>\d+): .*? (?:copied to|duplicated at) (?P<path>.+?):(?P<line>\d+) "
    r"\(lines (?P<first>\d+)-(?P<last>\d+)\)"
)
