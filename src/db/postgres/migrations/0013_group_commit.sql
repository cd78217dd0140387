-- A batch of multipart uploads of one account committed in one statement
-- (one transaction, one WAL flush for all): `files::commit_batch`, which a
-- node's group commit (`group::Groups`) calls with the uploads of an account
-- that arrived while its previous batch was in flight. Each upload goes
-- through `filestore_commit_upload` (migration 0012) in a block of its own
-- (a subtransaction): a refusal undoes that upload alone and is returned
-- as its outcome (its SQLSTATE, DETAIL and message), and the uploads after
-- it see the ones before (their statements' snapshots are taken later, in
-- the same transaction). The account row is locked by the first upload's
-- UPDATE and held to the commit, as one upload holds it. Uploads with an
-- idempotency key do not come here (that key is locked before the account).
-- Outcomes in the batch's order (`n` from 1).
-- Only adds: a node of an earlier schema never calls it.
CREATE FUNCTION filestore_commit_uploads(
    p_id TEXT[], p_account TEXT, p_name TEXT[], p_folder TEXT[], p_size BIGINT[],
    p_type TEXT[], p_private BOOLEAN[], p_sha256 TEXT[], p_blob_key TEXT[],
    p_created_at BIGINT[], p_expires_at BIGINT[], p_inline BOOLEAN[], p_metadata TEXT[],
    p_data BYTEA[], p_event TEXT[], p_period TEXT[], p_token TEXT[],
    p_max_storage BIGINT[], p_max_uploads BIGINT[])
RETURNS TABLE (n INTEGER, code TEXT, detail TEXT, message TEXT, queued INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_done RECORD;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_id), 0) LOOP
        n := i;
        code := NULL;
        detail := NULL;
        message := NULL;
        queued := 0;
        BEGIN
            SELECT * INTO v_done FROM filestore_commit_upload(p_id[i], p_account, p_name[i],
                p_folder[i], p_size[i], p_type[i], p_private[i], p_sha256[i], p_blob_key[i],
                p_created_at[i], p_expires_at[i], p_inline[i], p_metadata[i], p_data[i],
                p_event[i], p_period[i], NULL, 0, p_token[i], p_max_storage[i],
                p_max_uploads[i]);
            queued := v_done.queued;
        EXCEPTION WHEN SQLSTATE 'FS001' OR SQLSTATE 'FS002' OR SQLSTATE 'FS003' THEN
            GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL,
                message = MESSAGE_TEXT;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;
