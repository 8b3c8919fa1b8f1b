"""The metric layer: n-grams, BLEU, CrystalBLEU, S sets, the metric registry."""
