"""The clone layer: settings, index, retrieval, similarity, finder, scan."""
