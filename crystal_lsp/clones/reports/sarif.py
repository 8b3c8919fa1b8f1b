"""SARIF 2.1.0 reports of scan results (one result per clone class).

The first copy is the result's location and every other copy a related location; the clone
class id is the result's partial fingerprint, so code-scanning services track a finding across
commits. Columns follow SARIF: 1-based, ``endColumn`` one past the last character.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any
from urllib.parse import quote

from crystal_lsp.clones.findings import Finding, Location
from crystal_lsp.clones.scan import ScanResult
from crystal_lsp.version import __version__

RULE_ID = "crystal/near-duplicate"
SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"


def _physical(loc: Location) -> dict[str, Any]:
    return {
        "artifactLocation": {"uri": quote(os.fsencode(loc.path)), "uriBaseId": "SRCROOT"},
        "region": {
            "startLine": loc.first_line,
            "startColumn": loc.first_col,
            "endLine": loc.last_line,
            "endColumn": loc.last_col + 1,
        },
    }


def _message(finding: Finding) -> str:
    first = finding.locations[0]
    others = ", ".join(loc.label() for loc in finding.locations[1:4])
    more = len(finding.locations) - 4
    tail = f" and {more} more" if more > 0 else ""
    return (
        f"{first.kind.capitalize()} {first.name or ''} is a {finding.type} copy "
        f"(similarity {finding.score:.2f}) of {others}{tail}."
    ).replace("  ", " ")


def _result(finding: Finding) -> dict[str, Any]:
    related = [
        {
            "id": i,
            "physicalLocation": _physical(loc),
            "message": {"text": f"copy {i + 1}: {loc.kind} {loc.name}".rstrip()},
        }
        for i, loc in enumerate(finding.locations[1:], 1)
    ]
    return {
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "warning",
        "message": {"text": _message(finding)},
        "locations": [{"physicalLocation": _physical(finding.locations[0])}],
        "relatedLocations": related,
        "partialFingerprints": {"crystalCloneClass/v1": finding.id},
        "properties": {
            "score": round(finding.score, 6),
            "cloneType": finding.type,
            "language": finding.language,
            "copies": len(finding.locations),
            "pairs": [p.to_json() for p in finding.pairs],
        },
    }


def to_sarif(result: ScanResult) -> dict[str, Any]:
    """The SARIF 2.1.0 log of a scan."""
    root_uri = pathlib.Path(result.root).resolve().as_uri().rstrip("/") + "/"
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "crystal-lsp",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/crystal-lsp/crystal-lsp",
                        "rules": [
                            {
                                "id": RULE_ID,
                                "name": "NearDuplicateCode",
                                "shortDescription": {
                                    "text": "Code that repeats code elsewhere in the repository."
                                },
                                "fullDescription": {
                                    "text": "A function, class, block or statement run whose CrystalBLEU similarity "
                                    "(normalized tokens, trivially shared n-grams removed) to another one reaches the threshold."
                                },
                                "defaultConfiguration": {"level": "warning"},
                                "help": {
                                    "text": "Extract the shared code into one place, or add a 'crystal: ignore' "
                                    "comment on the line above a copy that must stay."
                                },
                            }
                        ],
                    }
                },
                "originalUriBaseIds": {"SRCROOT": {"uri": root_uri}},
                "invocations": [{"executionSuccessful": True}],
                "results": [_result(f) for f in result.findings],
                "properties": {
                    "signature": result.config.signature(),
                    "ssets": result.ssets,
                    "threshold": result.config.threshold,
                    "skipped": [{"path": p, "reason": r} for p, r in result.skipped],
                },
            }
        ],
    }
