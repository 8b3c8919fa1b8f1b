"""Aligning files: seeds, chains of seeds, regions snapped to lines and units, decided pairs.

The steps 1-3 of :mod:`crystal_lsp.clones.finder`: a :class:`~.workset.Workset` (one language's
files of a search) is aligned by :mod:`.alignment` (seeds -> chains -> candidates -> decisions)
and by digests of whole units and files (:mod:`.wholes`); what each file pair gave is kept for
reuse (:mod:`.reuse`). The output is accepted :class:`~.alignment.RegionPair` s.
"""
