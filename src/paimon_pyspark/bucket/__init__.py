"""Bucket assignment, one strategy per bucket mode (fixed, dynamic, cross-partition, postpone)."""
