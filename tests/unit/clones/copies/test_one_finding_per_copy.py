"""What a reviewer reads: one finding per copy, families as one, ranked by one refactoring.

Each test builds a small repository showing one kind of noise that real projects showed (issue
"One finding per copy"): the same copy reported again and again, families of parallel code,
ranking summed over members, windows over repetitive code, ranges that do not fit, and an
original lost past ``max-df``.
"""

from __future__ import annotations

import pathlib

from scan_samples import ORIGINAL, UNRELATED, find_all, module, near_copy, renamed

from crystal_lsp.clones.findings import COPY, SIMILAR, Finding

N = ORIGINAL.count("\n")


def spans(finding: Finding) -> list[tuple[str, int, int]]:
    return sorted((loc.path, loc.first_line, loc.last_line) for loc in finding.locations)


def copies(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == COPY]


# --- 1. the same copy, again and again ------------------------------------------------------

MIDDLE_A = """    audit = open_audit_log(region)
    audit.write(f"report for {region} with {len(orders)} orders")
    checksum = hashlib.sha256(repr(sorted(totals)).encode()).hexdigest()
    audit.write(f"checksum {checksum}")
    audit.close()
"""
MIDDLE_B = """    metrics = Metrics(prefix="orders", tags={"region": region})
    metrics.gauge("customers", len(totals), sample_rate=0.5)
    metrics.timing("elapsed", time.monotonic() - started, unit="ms")
    if metrics.enabled and not metrics.dry_run:
        metrics.flush(timeout=5, retries=3)
"""


def _split_at_report(middle: str) -> str:
    head, tail = ORIGINAL.split("    report = []\n")
    return head + middle + "    report = []\n" + tail


def test_windows_of_one_copy_are_one_finding(tmp_path: pathlib.Path) -> None:
    """An edit in the middle longer than a chain's gap splits the alignment in two windows."""
    files = {
        "a.py": module(_split_at_report(MIDDLE_A), UNRELATED[0]),
        "b.py": module(UNRELATED[1], _split_at_report(MIDDLE_B)),
    }
    found = copies(find_all(tmp_path / "repo", files))
    (finding,) = found
    assert len(finding.locations) == 2
    (a, b) = spans(finding)
    # from the function's start to its end on both sides: the two windows and the edit between
    assert a[2] - a[1] >= N and b[2] - b[1] >= N


CLASS = (
    '''class OrderReport:
    """Totals of one region's orders."""

    def __init__(self, orders, region):
        self.orders = [o for o in orders if o.region == region]
        self.region = region
        self.started = time.monotonic()

'''
    + "\n".join(
        "    " + line if line else ""
        for line in ORIGINAL.replace(
            "def summarize_orders(orders, region, limit=10):",
            "def summarize(self, orders, region, limit=10):",
        ).splitlines()
    )
    + '''

    def customers(self):
        """Every customer of the region's orders, once, sorted by name."""
        names = {order.customer.strip().lower() for order in self.orders}
        return sorted(name for name in names if name and not name.startswith("test-"))
'''
)


def test_a_copied_class_is_not_reported_again_method_by_method(tmp_path: pathlib.Path) -> None:
    files = {
        "a.py": module(CLASS, UNRELATED[0]),
        "b.py": module(UNRELATED[1], CLASS.replace("OrderReport", "InvoiceReport")),
    }
    found = find_all(tmp_path / "repo", files)
    (finding,) = found
    assert {loc.kind for loc in finding.locations} == {"class"}


def test_identical_files_give_their_inner_copies_once(tmp_path: pathlib.Path) -> None:
    inner = module(ORIGINAL, UNRELATED[0], renamed())
    files = {"one/tool.py": inner, "two/tool.py": inner, "c.py": module(UNRELATED[1])}
    found = find_all(tmp_path / "repo", files)
    kinds = sorted(
        ("file" if {loc.kind for loc in f.locations} == {"file"} else "inner", len(f.locations))
        for f in found
    )
    assert kinds == [("file", 2), ("inner", 2)]
    (inner_finding,) = [f for f in found if f.locations[0].kind != "file"]
    assert {loc.path for loc in inner_finding.locations} == {"one/tool.py"}


# --- 2. families of parallel code --------------------------------------------------------------


def vector(n: int) -> str:
    axes = "xyzw"[:n]
    args = ", ".join(axes)
    lines = [f"class Vector{n}:", f"    def __init__(self, {args}):"]
    lines += [f"        self.{a} = {a}" for a in axes]
    for op, sym in (("add", "+"), ("sub", "-"), ("mul", "*")):
        lines += ["", f"    def {op}(self, other):"]
        lines += [f"        self.{a} = self.{a} {sym} other.{a}" for a in axes]
        lines += ["        self.changed = True", "        return self"]
    lines += ["", "    def length(self):"]
    lines += ["        total = " + " + ".join(f"self.{a} * self.{a}" for a in axes)]
    lines += ["        return math.sqrt(total)", "", "    def copy(self, other):"]
    lines += [f"        self.{a} = other.{a}" for a in axes]
    lines += ["        return self", ""]
    return "\n".join(lines)


def test_parallel_classes_are_one_family(tmp_path: pathlib.Path) -> None:
    files = {f"math/vector{n}.py": module("import math\n", vector(n)) for n in (2, 3, 4)}
    files |= {
        f"math/point{n}.py": module("import math\n", vector(n).replace("Vector", "Point"))
        for n in (2, 3)
    }
    found = find_all(tmp_path / "repo", files, min_tokens=30, min_lines=3)
    families = [f for f in found if f.family]
    assert len(families) == 1
    (family,) = families
    assert family.evidence[0].startswith("family of parallel units")
    # its best pair, Point2 and Vector2, is verbatim but for the class name: a copy whatever
    # its family (issue 31's invariant); the vectors alone are parallel structure
    assert family.level == COPY and family.facts["invariant"] == "verbatim"
    assert {loc.path for loc in family.locations} >= {f"math/vector{n}.py" for n in (2, 3, 4)}
    # nothing else of the vector classes is a copy on its own
    alone = [f for f in copies(found) if not f.family]
    assert not [f for f in alone if any("vector" in loc.path for loc in f.locations)]


# --- 3. ranking by what one refactoring removes ------------------------------------------------

TAIL = """    if not rows:
        raise EmptyReport(f"nothing to report for {name}")
    writer = ReportWriter(stream=output, columns=columns, encoding="utf-8")
    writer.write_header(title=name.upper(), generated=time.strftime("%Y-%m-%d"))
    writer.write_rows(rows)
    return writer.close()
"""


def _with_tail(i: int) -> str:
    return (
        f"def report_{i}(name, output, columns):\n"
        f"    rows = fetch_rows_{i}(name, limit={i * 10})\n" + TAIL
    )


def test_a_long_copy_made_twice_outranks_a_tail_in_nine_files(tmp_path: pathlib.Path) -> None:
    long_function = _split_at_report(MIDDLE_A)
    files = {f"tails/t{i}.py": module(_with_tail(i)) for i in range(9)}
    files |= {"a.py": module(long_function), "b.py": module(UNRELATED[2], long_function)}
    found = find_all(tmp_path / "repo", files)
    assert len(found) == 2
    first, second = found
    assert {loc.path for loc in first.locations} == {"a.py", "b.py"}
    assert len(second.locations) == 9  # the tail: one finding, its nine places listed
    # summed over its members the tail would come first; one refactoring removes more of the
    # long copy
    assert first.weight > second.weight and second.gain > first.gain


# --- 4. repetitive code is one unit ------------------------------------------------------------

CHAIN = (
    "def describe(event):\n"
    + "".join(
        f'    {"if" if i == 0 else "elif"} event.kind == "{kind}":\n'
        f'        return Message(level="{level}", text=f"{kind} {{event.{field}}} at {{event.{stamp}}}")\n'
        for i, (kind, level, field, stamp) in enumerate(
            [
                ("created", "info", "name", "created_at"),
                ("updated", "info", "changes", "updated_at"),
                ("deleted", "warning", "reason", "deleted_at"),
                ("moved", "info", "destination", "moved_at"),
                ("locked", "warning", "owner", "locked_at"),
                ("unlocked", "info", "owner", "unlocked_at"),
                ("shared", "info", "audience", "shared_at"),
                ("archived", "notice", "archive", "archived_at"),
                ("restored", "notice", "origin", "restored_at"),
                ("expired", "error", "policy", "expired_at"),
                ("purged", "error", "operator", "purged_at"),
                ("tagged", "info", "tags", "tagged_at"),
            ]
        )
    )
    + '    raise ValueError(f"unknown event {event.kind}")\n'
)


def test_windows_of_an_if_chain_are_not_copies_of_each_other(tmp_path: pathlib.Path) -> None:
    files = {"events.py": module(CHAIN, UNRELATED[0]), "other.py": module(UNRELATED[1])}
    assert copies(find_all(tmp_path / "repo", files, min_tokens=30, min_lines=3)) == []


# --- 5. ranges that fit --------------------------------------------------------------------------

JS_FIRST = """export function totals(orders, region) {
  const sums = new Map();
  for (const order of orders) {
    if (order.region !== region || order.status === "cancelled") {
      continue;
    }
    const amount = order.quantity * order.unitPrice * (1 - (order.discount || 0));
    const key = order.customer.trim().toLowerCase();
    sums.set(key, (sums.get(key) || 0) + amount);
  }
  return [...sums.entries()].sort((a, b) => b[1] - a[1]);
}
"""


def test_a_range_never_starts_at_a_closing_bracket(tmp_path: pathlib.Path) -> None:
    before = "export const config = loadConfig({\n  strict: true,\n  retries: 3,\n});\n"
    files = {
        "a.js": before + "\n" + JS_FIRST,
        "b.js": "import { x } from './x.js';\n\n" + JS_FIRST.replace("totals", "sumsByCustomer"),
    }
    (finding,) = find_all(tmp_path / "repo", files)
    for loc in finding.locations:
        text = (tmp_path / "repo" / loc.path).read_text().splitlines()[loc.first_line - 1]
        assert not text.strip().startswith(("}", ")", "]")), text


def test_a_range_does_not_run_into_the_next_function(tmp_path: pathlib.Path) -> None:
    # the copy is followed by functions whose headers look alike in both files
    files = {
        "a.py": module(ORIGINAL, "def helper(value):\n    return value * 2 + 1\n"),
        "b.py": module(renamed(), "def helper(other):\n    return other * 3 - 1\n"),
    }
    (finding,) = find_all(tmp_path / "repo", files)
    assert {loc.kind for loc in finding.locations} == {"function"}
    assert {loc.name for loc in finding.locations} == {"summarize_orders", "tally_invoices"}


# --- 7. nothing lost past max-df ---------------------------------------------------------------


def test_an_original_with_more_near_copies_than_max_df_stays_in_its_group(
    tmp_path: pathlib.Path,
) -> None:
    edited = near_copy()  # one inserted statement: the 55 copies are identical to each other
    files = {f"pkg/m{i:02d}.py": module(edited) for i in range(55)}
    files["orig.py"] = module(ORIGINAL, UNRELATED[0])
    found = find_all(tmp_path / "repo", files, max_df=50)
    (finding,) = [f for f in found if any(loc.path == "pkg/m00.py" for loc in f.locations)]
    assert "orig.py" in {loc.path for loc in finding.locations}
    assert len(finding.locations) == 56


# --- 6. parallel implementations ----------------------------------------------------------------


def _backend(flavour: str) -> str:
    return ORIGINAL.replace('("shipped", "delivered")', f'("{flavour}-shipped", "{flavour}-done")')


def test_modules_of_one_name_in_two_folders_are_parallel_implementations(
    tmp_path: pathlib.Path,
) -> None:
    """One module per backend (db/mysql/operations.py, db/oracle/operations.py): the evidence
    says so (a feature of the verdict); a verbatim copy between them is a copy."""
    edited = near_copy(_backend("oracle")).replace("tally_invoices", "summarize_orders")
    files = {
        "db/mysql/operations.py": module(_backend("mysql"), UNRELATED[0]),
        "db/oracle/operations.py": module(UNRELATED[1], edited),
    }
    (finding,) = find_all(tmp_path / "repo", files)
    # what it is is said whatever its level (the calibrated verdict decides the level)
    assert finding.evidence[0] == "parallel implementations of operations.py (one per folder)"
    assert finding.facts["features"]["parallel"] == 1.0
    files["db/oracle/operations.py"] = module(UNRELATED[1], _backend("mysql"))
    (finding,) = find_all(tmp_path / "repo2", files)
    assert finding.level == COPY  # verbatim: pull it up into one shared module


def test_no_finding_lies_inside_a_higher_ranked_one() -> None:
    """Two functions of a window that a larger finding pairs with another window say nothing new;
    a copy inside a whole copied file, or a copy under similar structure, still does."""
    from crystal_lsp.clones.copies.build import without_repeats
    from crystal_lsp.clones.findings import Location, Pair

    def loc(first: int, last: int, kind: str = "lines", path: str = "a.js") -> Location:
        return Location(path, first, 1, last, 1, kind, "", 50, f"s{first}", f"n{first}")

    def finding(*spans: Location, level: str = COPY) -> Finding:
        return Finding("javascript", list(spans), [Pair(0, 1, 0.9, 0.9, copied=80)], level=level)

    windows = finding(loc(809, 855), loc(857, 903))
    inner = finding(loc(809, 831), loc(833, 855))
    files = finding(loc(1, 2000, "file"), loc(1, 2000, "file", "b.js"))
    in_file = finding(loc(100, 120), loc(130, 150))
    structure = finding(loc(809, 903), loc(905, 1000), level=SIMILAR)
    kept, hidden = without_repeats([windows, inner, files, in_file])
    assert kept == [windows, files, in_file] and hidden == 1
    kept, hidden = without_repeats([structure, inner])
    assert kept == [structure, inner] and hidden == 0
