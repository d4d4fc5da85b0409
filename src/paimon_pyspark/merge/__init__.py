"""Merge engines of primary-key tables, one module per engine, vectorized over Arrow."""
