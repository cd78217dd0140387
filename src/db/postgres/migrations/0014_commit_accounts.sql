-- The uploads of several accounts (of one period) committed in one
-- statement: one transaction, one WAL flush for all of them. A node's
-- commit bus (`bus.rs`) calls it with the uploads that became ready while
-- its previous statement was in flight.
--
-- The uploads come ordered by account (`p_account`, each named once, in
-- the order the node sorted them: every node sorts the same way, so two
-- such statements lock the account rows in one order); account `a` has the
-- uploads from just past `p_end[a - 1]` to `p_end[a]`. Each account's
-- batch is judged and written by `filestore_commit_uploads` (migration
-- 0013) exactly as if it came alone, in the same transaction; outcomes
-- come in the uploads' order (`n` from 1 over them all).
--
-- No lock is waited for past `lock_timeout` (100 ms): a row of one account
-- held long by another transaction (a delete of many files, say) fails
-- this statement (SQLSTATE 55P03), and the node commits each account's
-- batch on its own instead, so that the others do not wait behind it. A
-- wait for another node's commit of the same account (a WAL flush) is far
-- shorter.
-- The function only adds: a node of an earlier schema never calls it.
CREATE FUNCTION filestore_commit_accounts(
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
BEGIN
    IF coalesce(cardinality(p_account), 0) <> coalesce(cardinality(p_end), 0)
       OR coalesce(p_end[cardinality(p_end)], 0) <> coalesce(cardinality(p_id), 0) THEN
        RAISE EXCEPTION 'the accounts do not cover the uploads' USING ERRCODE = 'FS003';
    END IF;
    FOR a IN 1 .. coalesce(cardinality(p_account), 0) LOOP
        v_hi := p_end[a];
        IF v_hi < v_lo OR (a > 1 AND p_account[a] COLLATE "C" <= p_account[a - 1] COLLATE "C")
        THEN
            RAISE EXCEPTION 'the accounts are not in order, each once' USING ERRCODE = 'FS003';
        END IF;
        RETURN QUERY
        SELECT v_lo - 1 + c.n, c.code, c.detail, c.message, c.queued
        FROM filestore_commit_uploads(
            p_id[v_lo:v_hi], p_account[a], p_name[v_lo:v_hi], p_folder[v_lo:v_hi],
            p_size[v_lo:v_hi], p_type[v_lo:v_hi], p_private[v_lo:v_hi], p_sha256[v_lo:v_hi],
            p_blob_key[v_lo:v_hi], p_created_at[v_lo:v_hi], p_expires_at[v_lo:v_hi],
            p_inline[v_lo:v_hi], p_metadata[v_lo:v_hi], p_data[v_lo:v_hi], p_event[v_lo:v_hi],
            p_period, p_token[v_lo:v_hi], p_max_storage[v_lo:v_hi],
            p_max_uploads[v_lo:v_hi]) c;
        v_lo := v_hi + 1;
    END LOOP;
END
$$;

