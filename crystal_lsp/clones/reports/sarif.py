"""SARIF 2.1.0 reports of scan results (one result per finding, every level).

The representative is the result's location and every other copy a related location (with the
changed lines of ``--new-since``, a changed copy is the result's location:
:func:`crystal_lsp.clones.reports.annotations.annotated`, since a pull request shows only
annotations on lines it changes); each message is a sentence (:mod:`crystal_lsp.clones.reports.sentences`). Copies are ``warning``
results, similar structure ``note`` (with ``level``, ``family`` and ``evidence`` in the
properties). The finding id is the result's partial fingerprint, so code-scanning services track
a finding across commits. Columns follow SARIF: 1-based, ``endColumn`` one past the last
character.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any
from urllib.parse import quote

from crystal_lsp.clones.findings import COPY, Finding, Location
from crystal_lsp.clones.reports.annotations import Focus, annotated
from crystal_lsp.clones.reports.sentences import sentence
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


def _result(finding: Finding, focus: Focus | None) -> dict[str, Any]:
    first = annotated(finding, focus)[0] if focus is not None else 0
    told = first if focus is not None else finding.representative
    others = [k for k in range(len(finding.locations)) if k != first]
    related = [
        {
            "id": i,
            "physicalLocation": _physical(finding.locations[k]),
            "message": {"text": sentence(finding, k)},
        }
        for i, k in enumerate(others, 1)
    ]
    return {
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "warning" if finding.level == COPY else "note",
        "message": {"text": sentence(finding, told)},
        "locations": [{"physicalLocation": _physical(finding.locations[first])}],
        "relatedLocations": related,
        "partialFingerprints": {"crystalCloneClass/v1": finding.id},
        "properties": {
            "score": round(finding.score, 6),
            "cloneType": finding.type,
            "language": finding.language,
            "copies": len(finding.locations),
            "pairs": [p.to_json() for p in finding.pairs],
            "level": finding.level,
            "family": finding.family,
            "evidence": list(finding.evidence),
            "weight": round(finding.weight, 3),
            "probability": (None if finding.probability is None else round(finding.probability, 4)),
            "facts": finding.facts,
        },
    }


def to_sarif(result: ScanResult, focus: Focus | None = None) -> dict[str, Any]:
    """The SARIF 2.1.0 log of a scan (``focus``: the changed lines of ``--new-since``)."""
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
                "results": [_result(f, focus) for f in result.findings],
                "properties": {
                    "signature": result.config.signature(),
                    "ssets": result.ssets,
                    "threshold": result.config.threshold,
                    "skipped": [{"path": p, "reason": r} for p, r in result.skipped],
                },
            }
        ],
    }
