"""From accepted pairs of regions to findings: one finding per copy, families, levels, ranking.

Step 4 of :mod:`crystal_lsp.clones.finder`: pairs of aligned regions (:mod:`crystal_lsp.clones.align`)
become the findings a reviewer reads (:mod:`.build`).
"""
