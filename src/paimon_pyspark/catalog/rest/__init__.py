"""A client of Paimon's REST catalog API (Java's ``RESTCatalog``, pypaimon's)."""
