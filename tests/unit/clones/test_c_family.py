"""The C family compared alike: ``.c``, ``.h`` and ``.cc`` files of one repository are one corpus.

Pygments lexes ``.c`` and C-only headers as C and ``.cc`` as C++; a repository with both keeps
its C code in the C++ comparison (issue 31, "C and C++"), so a function copied from a C source
or a C header into a C++ file is found, and an N-way copy across the three is one finding.
"""

from __future__ import annotations

import pathlib

from scan_samples import find_all

from crystal_lsp.clones.findings import Finding

CHECKSUM = """static unsigned int block_checksum(const unsigned char *data, size_t length, int rounds)
{
    unsigned int sum = 0x12345u;
    size_t index;
    int round;
    for (round = 0; round < rounds; round++) {
        for (index = 0; index < length; index++) {
            sum = (sum << 5) ^ (sum >> 27) ^ data[index];
            if (sum & 0x80000000u) {
                sum ^= 0x04c11db7u * (unsigned int)(round + 1);
            }
        }
        sum += (unsigned int)length * 31u;
    }
    if (rounds <= 0) {
        return 0;
    }
    return sum ^ (sum >> 16);
}
"""
OTHER_C = """int parse_flags(const char *text)
{
    int flags = 0;
    while (*text) {
        switch (*text++) {
        case 'r': flags |= 1; break;
        case 'w': flags |= 2; break;
        case 'x': flags |= 4; break;
        default: return -1;
        }
    }
    return flags;
}
"""
OTHER_CC = """namespace store {

std::string Describe(const Record& record) {
  std::ostringstream out;
  out << record.name() << " (" << record.size() << " bytes)";
  return out.str();
}

}  // namespace store
"""


def places(findings: list[Finding]) -> list[list[str]]:
    return [sorted(loc.path for loc in f.locations) for f in findings]


def test_a_function_in_a_c_source_and_a_cpp_source_is_found(tmp_path: pathlib.Path) -> None:
    files = {
        "src/x.c": f"#include <stddef.h>\n\n{OTHER_C}\n{CHECKSUM}",
        "src/y.cc": f"#include <string>\n\n{OTHER_CC}\n{CHECKSUM}",
    }
    assert ["src/x.c", "src/y.cc"] in places(find_all(tmp_path / "repo", files))


def test_a_function_in_a_c_header_and_a_cpp_source_is_found(tmp_path: pathlib.Path) -> None:
    """A header without C++ lexes as C; it is still compared with the C++ sources."""
    files = {
        "include/y.h": f"#ifndef Y_H\n#define Y_H\n#include <stddef.h>\n\n{CHECKSUM}\n#endif\n",
        "src/z.cc": f"#include <string>\n\n{OTHER_CC}\n{CHECKSUM}",
    }
    assert ["include/y.h", "src/z.cc"] in places(find_all(tmp_path / "repo", files))


def test_a_function_in_a_c_source_and_a_c_header_is_found(tmp_path: pathlib.Path) -> None:
    files = {
        "src/x.c": f"#include <stddef.h>\n\n{OTHER_C}\n{CHECKSUM}",
        "include/y.h": f"#ifndef Y_H\n#define Y_H\n#include <stddef.h>\n\n{CHECKSUM}\n#endif\n",
        "src/z.cc": f"#include <string>\n\n{OTHER_CC}",
    }
    assert ["include/y.h", "src/x.c"] in places(find_all(tmp_path / "repo", files))


def test_a_copy_in_a_c_source_a_header_and_a_cpp_source_is_one_finding(
    tmp_path: pathlib.Path,
) -> None:
    files = {
        "src/x.c": f"#include <stddef.h>\n\n{OTHER_C}\n{CHECKSUM}",
        "include/y.h": f"#ifndef Y_H\n#define Y_H\n#include <stddef.h>\n\n{CHECKSUM}\n#endif\n",
        "src/z.cc": f"#include <string>\n\n{OTHER_CC}\n{CHECKSUM}",
    }
    found = find_all(tmp_path / "repo", files)
    assert ["include/y.h", "src/x.c", "src/z.cc"] in places(found), places(found)
    assert {f.language for f in found} == {"cpp"}


def test_a_c_only_repository_stays_c(tmp_path: pathlib.Path) -> None:
    files = {
        "src/x.c": f"#include <stddef.h>\n\n{OTHER_C}\n{CHECKSUM}",
        "src/w.c": f"#include <stddef.h>\n\n{CHECKSUM}",
    }
    found = find_all(tmp_path / "repo", files)
    assert ["src/w.c", "src/x.c"] in places(found)
    assert {f.language for f in found} == {"c"}
