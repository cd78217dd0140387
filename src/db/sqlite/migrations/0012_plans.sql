-- Plans (docs/decisions.md, "Plans in the database"): every node enforces
-- the limits kept here, not its own config's. `spec` is the plan's limits
-- as JSON, so that a new limit is a new key, not a schema change a previous
-- release would trip on.
CREATE TABLE plans (
    name       TEXT PRIMARY KEY,
    spec       TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
