"""Table maintenance: snapshot and long-lived changelog expiration (Java's ExpireSnapshotsImpl,
SnapshotDeletion, ExpireChangelogImpl, ChangelogDeletion), orphan files, tags and rollback."""
