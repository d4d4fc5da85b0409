"""The JDBC catalog: Java's ``JdbcCatalog`` tables in SQLite or PostgreSQL, and its lock."""
