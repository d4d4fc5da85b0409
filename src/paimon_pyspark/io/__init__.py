"""The data files of one bucket: naming, rolling writers, readers (org.apache.paimon.io)."""
