"""Unit names and ranges a reviewer can trust: names come from the enclosing definition.

Each test builds a small repository of one kind that real projects showed wrong (issues 30 and
31): Go code inside ``t.Run`` subtests named after the call (``function Run``), composite
literals inside calls named after the called function (``function Logf``).
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
    assert all("Run" not in d and "Logf" not in d and "len" not in d for d in described)
    assert any(d.endswith(("function TestOpen", "function TestReopen")) for d in described), (
        described
    )


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
