"""The REST catalog server: Paimon's REST catalog API over a warehouse (the ``rest`` extra)."""
