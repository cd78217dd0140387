-- The strangers' share (docs/decisions.md, "The strangers' share").
--
-- Of the period's uploads, those an account's public keys and upload
-- tokens made, counted in the transaction that commits each (under the
-- account row's lock), against their share of the plan's monthly uploads.
-- The commit functions (migrations 0012 to 0016) commit the account's own
-- keys' uploads only and leave it as it is.
ALTER TABLE usage_periods ADD COLUMN stranger_uploads BIGINT NOT NULL DEFAULT 0;

-- The upload bodies of an account's strangers arriving at once, one row
-- each, on every node: a node takes one in a transaction under the account
-- row's lock, counting the rows of live nodes only (a node is alive while
-- its session holds its advisory lock, `db/postgres/node.rs`), and removes
-- it when the body has arrived. The rows of a node that died are ignored,
-- and removed by the next taker.
CREATE TABLE stranger_slots (
    id         TEXT PRIMARY KEY,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    node       INTEGER NOT NULL,
    taken_at   BIGINT NOT NULL
);
CREATE INDEX stranger_slots_account ON stranger_slots(account_id);
