"""Table maintenance: snapshot expiration (Java's ExpireSnapshotsImpl and SnapshotDeletion)."""
