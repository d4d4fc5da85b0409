"""The store layer: a table's files, managers, manifests and options, below every operation."""
