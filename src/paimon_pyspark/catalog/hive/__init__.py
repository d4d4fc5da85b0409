"""The Hive Metastore catalog (``metastore = hive``): Java's ``HiveCatalog``; needs the ``hive``
extra (``pip install 'paimon-pyspark[hive]'``) only when a catalog is opened."""
