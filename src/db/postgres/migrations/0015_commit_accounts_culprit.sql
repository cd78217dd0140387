-- `filestore_commit_accounts` (migration 0014) names the account whose
-- lock it gave up on. A lock held past `lock_timeout` still fails the whole
-- statement (SQLSTATE 55P03, nothing written), but its DETAIL is now that
-- account's id, so that the node has only that account commit on its own
-- for a while (`bus.rs`), not every account that shared the statement.
-- The loop runs in a block that catches only that error (one subtransaction
-- per statement, not one per account) and raises it again, named.
-- The signature, the outcomes and the SQLSTATE are unchanged: a node of
-- schema 14 reads the error as before.
CREATE OR REPLACE FUNCTION filestore_commit_accounts(
    p_account TEXT[], p_end INTEGER[], p_id TEXT[], p_name TEXT[], p_folder TEXT[],
    p_size BIGINT[], p_type TEXT[], p_private BOOLEAN[], p_sha256 TEXT[], p_blob_key TEXT[],
    p_created_at BIGINT[], p_expires_at BIGINT[], p_inline BOOLEAN[], p_metadata TEXT[],
    p_data BYTEA[], p_event TEXT[], p_period TEXT, p_token TEXT[],
    p_max_storage BIGINT[], p_max_uploads BIGINT[])
RETURNS TABLE (n INTEGER, code TEXT, detail TEXT, message TEXT, queued INTEGER)
LANGUAGE plpgsql SET lock_timeout = '100ms' AS $$
DECLARE
    v_lo INTEGER := 1;
    v_hi INTEGER;
    v_at INTEGER := 0;
BEGIN
    IF coalesce(cardinality(p_account), 0) <> coalesce(cardinality(p_end), 0)
       OR coalesce(p_end[cardinality(p_end)], 0) <> coalesce(cardinality(p_id), 0) THEN
        RAISE EXCEPTION 'the accounts do not cover the uploads' USING ERRCODE = 'FS003';
    END IF;
    BEGIN
        FOR a IN 1 .. coalesce(cardinality(p_account), 0) LOOP
            v_at := a;
            v_hi := p_end[a];
            IF v_hi < v_lo
               OR (a > 1 AND p_account[a] COLLATE "C" <= p_account[a - 1] COLLATE "C") THEN
                RAISE EXCEPTION 'the accounts are not in order, each once' USING ERRCODE = 'FS003';
            END IF;
            RETURN QUERY
            SELECT v_lo - 1 + c.n, c.code, c.detail, c.message, c.queued
            FROM filestore_commit_uploads(
                p_id[v_lo:v_hi], p_account[a], p_name[v_lo:v_hi], p_folder[v_lo:v_hi],
                p_size[v_lo:v_hi], p_type[v_lo:v_hi], p_private[v_lo:v_hi],
                p_sha256[v_lo:v_hi], p_blob_key[v_lo:v_hi], p_created_at[v_lo:v_hi],
                p_expires_at[v_lo:v_hi], p_inline[v_lo:v_hi], p_metadata[v_lo:v_hi],
                p_data[v_lo:v_hi], p_event[v_lo:v_hi], p_period, p_token[v_lo:v_hi],
                p_max_storage[v_lo:v_hi], p_max_uploads[v_lo:v_hi]) c;
            v_lo := v_hi + 1;
        END LOOP;
    EXCEPTION WHEN lock_not_available THEN
        -- Always raised again: the rows already returned stay in the
        -- result, so the handler must never end the function normally.
        -- A lock on a whole table (DDL) names the account at work when it
        -- came; SQLERRM says what it was.
        RAISE EXCEPTION 'a lock was held past lock_timeout during account %''s uploads: %',
            p_account[v_at], SQLERRM
            USING ERRCODE = 'lock_not_available', DETAIL = p_account[v_at];
    END;
END
$$;
