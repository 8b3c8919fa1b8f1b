"""Unit names and ranges a reviewer can trust: names come from the enclosing definition.

Each test builds a small repository of one kind that real projects showed wrong (issues 30 and
31): Go code inside ``t.Run`` subtests named after the call (``function Run``), composite
literals inside calls named after the called function (``function Logf``); a C++ class copied
into a header and a source file.
"""

from __future__ import annotations

import pathlib

from scan_samples import find_all

SUBTEST_BODY = """		cfg := Config{Name: "alpha", Retries: 3, Timeout: 30}
		store := NewStore(cfg)
		if err := store.Open(ctx); err != nil {
			t.Fatalf("open %s: %v", cfg.Name, err)
		}
		defer store.Close()
		for i := 0; i < 10; i++ {
			key := fmt.Sprintf("key-%d", i)
			if err := store.Put(key, []byte{byte(i), 1, 2}); err != nil {
				t.Fatalf("put %s: %v", key, err)
			}
		}
		got, err := store.Get("key-3")
		if err != nil || len(got) != 3 {
			t.Logf("%v", Entry{Key: "key-3", Value: got})
			t.Fatalf("get key-3: %v %v", got, err)
		}
"""


def _go_test(name: str, before: str, after: str) -> str:
    return (
        "package store\n\n"
        f"func {name}(t *testing.T) {{\n"
        f"{before}"
        f'\tt.Run("{name.lower()}", func(t *testing.T) {{\n'
        f"{SUBTEST_BODY}"
        f"{after}"
        "\t})\n"
        "}\n"
    )


def test_go_code_in_a_subtest_lies_in_the_test_function(tmp_path: pathlib.Path) -> None:
    files = {
        "a_test.go": _go_test(
            "TestOpen",
            "\tctx := context.Background()\n\tt.Parallel()\n",
            '\t\tassertMetrics(t, store, "open", 1)\n\t\tstore.Flush(ctx, true)\n'
            "\t\tcheckLeaks(t)\n",
        ),
        "b_test.go": _go_test(
            "TestReopen",
            "\tctx, cancel := context.WithCancel(context.Background())\n\tdefer cancel()\n",
            '\t\tif store.Len() != 10 {\n\t\t\tt.Errorf("len %d", store.Len())\n\t\t}\n',
        ),
    }
    findings = find_all(tmp_path / "repo", files, show_similar=True)
    assert findings
    described = [loc.describe() for f in findings for loc in f.locations]
    # the subtest, whole: named after the call it is passed to and the test that defines it
    assert all(d.endswith(("TestOpen", "TestReopen")) for d in described), described
    assert not any("Logf" in d or "len" in d for d in described), described


WIDGET = """class EXPORT_API Widget : public Base {
 public:
  explicit Widget(int size) : size_(size), items_() {}

  int total(const std::vector<int>& extra) const {
    int sum = 0;
    for (int item : items_) {
      if (item > size_) {
        sum += item * 2;
      } else {
        sum -= item;
      }
    }
    for (size_t i = 0; i < extra.size(); ++i) {
      sum += extra[i] % (size_ + 1);
    }
    return sum;
  }

 private:
  int size_;
  std::vector<int> items_;
};

double Widget::ratio(const Ledger& ledger, int window) const {
  double weighted = 0.0;
  int counted = 0;
  for (const auto& entry : ledger.entries()) {
    if (entry.age() > window || entry.voided()) {
      continue;
    }
    weighted += entry.amount() / (1.0 + entry.age());
    counted += entry.flags() & kAuditMask ? 2 : 1;
  }
  if (counted == 0) {
    throw std::runtime_error("empty ledger window");
  }
  return weighted / counted;
}
"""


def test_a_class_copied_into_a_header_and_a_source_is_found(tmp_path: pathlib.Path) -> None:
    """Pygments lexes ``.h`` as C: a C++ header is lexed, and compared, as C++."""
    files = {
        "include/widget.h": f"#pragma once\n#include <vector>\n\n{WIDGET}",
        "src/legacy.cc": f'#include "legacy.h"\n\nnamespace legacy {{\n\n{WIDGET}\n}}\n',
    }
    findings = find_all(tmp_path / "repo", files)
    places = [sorted(loc.path for loc in f.locations) for f in findings]
    assert ["include/widget.h", "src/legacy.cc"] in places
    described = [loc.describe() for f in findings for loc in f.locations]
    assert not any("EXPORT_API" in d for d in described), described


# --- whole units as ranges ---------------------------------------------------------------------

BODY = """        int checked = 0;
        for (Entry<K, V> e = table[index(key)]; e != null; e = e.next) {
            if (e.hash == hash && Objects.equals(e.key, key)) {
                checked += e.weight;
                e.touched = System.nanoTime();
                if (checked > limit) {
                    throw new IllegalStateException("over limit " + limit);
                }
                return e.value;
            }
            misses.incrementAndGet();
        }
        statistics.record(key, checked, misses.get());
        return fallback.apply(key);
"""


def _java_class(name: str, method: str, first: str) -> str:
    return (
        f"public class {name}<K, V> {{\n"
        f"    /** Looks the key up. */\n"
        f"    public V {method}(Object key, int limit) {{\n"
        f"{first}"
        f"{BODY}"
        "    }\n"
        "}\n"
    )


def test_a_copy_of_most_of_a_method_is_the_method(tmp_path: pathlib.Path) -> None:
    """The signature and the first lines were edited: the copy is still of the whole method."""
    files = {
        "Cache.java": _java_class(
            "Cache",
            "lookup",
            '        Objects.requireNonNull(key, "key");\n'
            "        int hash = spread(key.hashCode());\n"
            "        lock.readLock().lock();\n",
        ),
        "Store.java": _java_class(
            "Store",
            "find",
            "        if (key == null) {\n            return null;\n        }\n"
            "        final int hash = key.hashCode() ^ seed;\n",
        ),
    }
    (finding,) = find_all(tmp_path / "repo", files, show_similar=True)
    assert sorted(loc.describe() for loc in finding.locations) == [
        "function find",
        "function lookup",
    ]
    # the signature included, the javadoc above it not (it is no part of the copy)
    assert sorted(loc.first_line for loc in finding.locations) == [3, 3]


BLOCK = """        rangeCheck(a.length, aFromIndex, aToIndex);
        rangeCheck(b.length, bFromIndex, bToIndex);
        int aLength = aToIndex - aFromIndex;
        int bLength = bToIndex - bFromIndex;
        int total = 0;
        for (int k = 0; k < Math.min(aLength, bLength); k++) {
            total += weights[k] * (a[aFromIndex + k] - b[bFromIndex + k]);
            if (total > threshold) {
                audit.warn("drift", k, total);
            }
        }
        int i = ArraysSupport.mismatch(a, aFromIndex,
                                       b, bFromIndex,
"""


def _compare(name: str, last_argument: str, before: list[str], after: list[str]) -> str:
    lines = "".join(f"        {line}\n" for line in before)
    rest = "".join(f"        {line}\n" for line in after)
    return (
        f"    static int {name}(int[] a, int aFromIndex, int aToIndex,\n"
        f"            int[] b, int bFromIndex, int bToIndex, int threshold) {{\n"
        f"{lines}{BLOCK}"
        f"                                       {last_argument});\n"
        f"{rest}"
        "    }\n"
    )


def test_a_range_ends_where_a_statement_ends(tmp_path: pathlib.Path) -> None:
    """The copy's last call differs in its last argument: the range stops before the call."""
    first = _compare(
        "compare",
        "Math.min(aLength, bLength)",
        [f'log.debug("compare step {i}", a.length + {i});' for i in range(12)],
        [f"counters[{i}] += i * {i + 3};" for i in range(12)],
    )
    second = _compare(
        "compareUnsigned",
        "aLength - bLength + offset",
        [f'trace("unsigned {i}", unsignedBase + b.length * {i});' for i in range(12)],
        [f"histogram.add({i}, i - {i + 5});" for i in range(12)],
    )
    files = {"A.java": f"class A {{\n{first}}}\n", "B.java": f"class B {{\n{second}}}\n"}
    findings = find_all(tmp_path / "repo", files, show_similar=True)
    assert findings
    sources = {path: text.splitlines() for path, text in files.items()}
    for finding in findings:
        for loc in finding.locations:
            last = sources[loc.path][loc.last_line - 1].rstrip()
            assert last.endswith((";", "{", "}")), (loc.describe(), last)


def test_lines_of_a_subtest_lie_in_the_test_function(tmp_path: pathlib.Path) -> None:
    """A copy of part of a subtest is lines of the test function, not of ``Run`` or its callback."""
    files = {
        "a_test.go": _go_test(
            "TestOpen",
            "\tctx := context.Background()\n",
            "".join(f'\t\tassertMetric(t, store, "open.{i}", {i}*{i + 7})\n' for i in range(40)),
        ),
        "b_test.go": _go_test(
            "TestReopen",
            "\tctx := context.TODO()\n",
            "".join(
                f'\t\tif got := store.Count("k{i}"); got != {i} {{\n\t\t\tt.Errorf("count {i}: %d", got)\n\t\t}}\n'
                for i in range(14)
            ),
        ),
    }
    findings = find_all(tmp_path / "repo", files, show_similar=True)
    described = [loc.describe() for f in findings for loc in f.locations]
    assert described
    assert all(d.startswith("lines ") for d in described), described
    assert all(d.endswith(("of function TestOpen", "of function TestReopen")) for d in described), (
        described
    )


# --- data tables ---------------------------------------------------------------------------------

TABLE = """_combinations = [
    {
        connector: [
            (fields.IntegerField, fields.IntegerField, fields.IntegerField),
            (fields.FloatField, fields.FloatField, fields.FloatField),
            (fields.DecimalField, fields.DecimalField, fields.DecimalField),
            (fields.IntegerField, fields.FloatField, fields.FloatField),
        ]
        for connector in (
            Combinable.ADD,
            Combinable.SUB,
            Combinable.MUL,
            Combinable.DIV,
        )
    },
    {
        connector: [
            (fields.IntegerField, fields.DecimalField, fields.DecimalField),
            (fields.DecimalField, fields.IntegerField, fields.DecimalField),
            (fields.IntegerField, fields.FloatField, fields.FloatField),
            (fields.FloatField, fields.IntegerField, fields.FloatField),
        ]
        for connector in (
            Combinable.ADD,
            Combinable.SUB,
            Combinable.MUL,
            Combinable.MOD,
        )
    },
]
"""


def test_a_data_table_is_named_as_data(tmp_path: pathlib.Path) -> None:
    """Rows of a module-level table are "lines of data _combinations", marked in the evidence."""
    findings = find_all(tmp_path / "repo", {"expressions.py": f"import fields\n\n\n{TABLE}"})
    assert findings
    for finding in findings:
        described = [loc.describe() for loc in finding.locations]
        assert all(d.endswith("of data _combinations") for d in described), described
        assert "a data table" in finding.evidence


def test_statements_with_calls_are_not_data() -> None:
    from crystal_lsp.text.tables import assigned_name, is_table
    from crystal_lsp.text.tokens import tokenize
    from crystal_lsp.text.views import categories

    def table(source: str) -> tuple[bool, str]:
        tokens = tokenize(source, "python")
        cats = categories(tokens.texts, tokens.types)
        n = len(tokens.texts)
        return is_table(tokens.texts, cats, 0, n), assigned_name(tokens.texts, cats, 0, n)

    assert table(TABLE) == (True, "_combinations")
    assert not table("setup(name='x', version='1', packages=find_packages(), zip_safe=False)\n")[0]
    assert not table("for item in rows:\n    total += item.size, item.count, item.age\n")[0]


def test_keyword_arguments_of_a_call_are_not_data() -> None:
    from crystal_lsp.text.tables import depth_at, is_table
    from crystal_lsp.text.tokens import tokenize
    from crystal_lsp.text.views import categories

    source = "syntax = Syntax(\n    code=code,\n    lexer=args.lexer,\n    theme=args.theme,\n)\n"
    tokens = tokenize(source, "python")
    cats = categories(tokens.texts, tokens.types)
    inside = tokens.texts.index("code")
    assert depth_at(tokens.texts, cats, 0, inside) == -1
    assert not is_table(tokens.texts, cats, inside, len(tokens.texts) - 1, -1)


PY_BODY = """    for field in operation.fields:
        if field.name in app.reserved:
            raise ValueError(f"reserved name {field.name!r} in {app.label}")
        column = app.columns.get(field.name)
        if column is None:
            column = app.add_column(field.name, field.kind, null=field.null)
        elif column.kind != field.kind:
            app.alter_column(column, field.kind, default=field.default)
    app.log("built", operation.name, len(operation.fields))
    return operation
"""


def _py_builder(name: str, before: list[str], head: str) -> str:
    lines = "".join(f"    {line}\n" for line in before)
    return (
        f"def {name}(self, app, label):\n"
        f"{lines}{head}"
        "        bases=self.bases,\n"
        "        managers=self.managers,\n"
        '        options={"ordering": ["id"], "verbose_name": label, "proxy": False},\n'
        "        fields=[(f.name, f.clone()) for f in self.fields if not f.hidden],\n"
        "    )\n"
        f"{PY_BODY}"
    )


def test_a_python_range_starts_and_ends_with_whole_statements(tmp_path: pathlib.Path) -> None:
    """The copy's first call differs in its first arguments: the range holds the whole call."""
    import ast

    files = {
        "a.py": _py_builder(
            "build_model",
            [f'counters["{i}"] = app.count({i}) + {i * 7}' for i in range(14)],
            '    operation = make_model(\n        "alpha", 3, True,\n',
        ),
        "b.py": "import os\n\n\n"
        + _py_builder(
            "build_proxy",
            [f"if label.startswith({chr(97 + i)!r}):\n        yield {i}, None" for i in range(14)],
            "    result[key] = Proxy.create(app.registry[label],\n        name=label.upper(),\n",
        ),
    }
    findings = find_all(tmp_path / "repo", files, show_similar=True)
    assert findings
    for finding in findings:
        for loc in finding.locations:
            tree = ast.parse(files[loc.path])
            statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
            assert loc.first_line in {n.lineno for n in statements}, loc.describe()
            assert loc.last_line in {n.end_lineno for n in statements}, loc.describe()


SEARCH_BODY = """        rangeCheck(a.length, fromIndex, toIndex);
        int low = fromIndex;
        int high = toIndex - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            if (a[mid] < key) {
                low = mid + 1;
            } else if (a[mid] > key) {
                high = mid - 1;
            } else {
                audit.record("found", mid, key);
                return mid;
            }
        }
        audit.record("missed", low, key);
        return -(low + 1);
"""


def _searches(cls: str, kind: str, other: str) -> str:
    return (
        f"class {cls} {{\n"
        f"{other}\n"
        f"    public static int search({kind}[] a, {kind} key) {{\n"
        "        return search(a, 0, a.length, key);\n"
        "    }\n"
        "\n"
        "    /** Searches a range. */\n"
        f"    public static int search({kind}[] a, int fromIndex, int toIndex, {kind} key) {{\n"
        f"{SEARCH_BODY}"
        "    }\n"
        "}\n"
    )


def _method(name: str, lines: list[str]) -> str:
    body = "".join(f"        {line}\n" for line in lines)
    return f"    void {name}(Registry registry) {{\n{body}    }}\n"


def test_a_range_takes_a_small_method_it_enters_whole(tmp_path: pathlib.Path) -> None:
    """A one-line method (smaller than a unit) whose body starts a copy is taken whole."""
    files = {
        "A.java": _searches(
            "A",
            "long",
            _method(
                "prepare", [f'registry.put("a{i}", new Node({i}, {i * 3}));' for i in range(14)]
            ),
        ),
        "B.java": _searches(
            "B",
            "int",
            _method(
                "check",
                [f"if (registry.size() > {i}) {{ registry.trim({i}); }}" for i in range(14)],
            ),
        ),
    }
    findings = find_all(tmp_path / "repo", files, show_similar=True)
    assert findings
    for finding in findings:
        for loc in finding.locations:
            text = files[loc.path].splitlines()
            first = text[loc.first_line - 1].strip()
            # not the body of the small method without its signature
            assert not first.startswith("return search(a, 0"), (loc.describe(), first)


def test_a_new_range_replaces_a_pair_only_when_it_keeps_its_level() -> None:
    """A copy whose range, made not to straddle, reads as similar structure stays as it was."""
    from crystal_lsp.clones.align.pairs import RegionPair
    from crystal_lsp.clones.align.regions import Region
    from crystal_lsp.clones.copies.units import as_within_units

    def region(path: str, start: int, end: int) -> Region:
        return Region(path, start, end, start, 1, end, 1, -1, False)

    pair = RegionPair(region("a.go", 10, 90), region("b.go", 10, 90), 0.9, 0.8, 60)
    cut = {"a.go": region("a.go", 30, 90), "b.go": region("b.go", 30, 90)}

    def edges(r: Region) -> tuple[Region | None, Region | None]:
        return cut[r.path], cut[r.path]

    def decide(a: Region, b: Region) -> RegionPair:
        return RegionPair(a, b, 0.9, 0.8, 40)  # under 50 copied tokens: a short repeat

    def level(p: RegionPair) -> str:
        return "copy" if p.copied >= 50 else "similar"

    kept, changed = as_within_units([pair], edges, decide, lambda old, new: level(new) == "copy")
    assert (kept, changed) == ([pair], 0)
    kept, changed = as_within_units([pair], edges, decide)
    assert changed == 1 and kept[0].a == cut["a.go"]
