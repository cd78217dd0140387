-- A multipart upload's commit in one statement (one round trip, one
-- transaction, one WAL flush), called by `files::commit_in_one`. The rows
-- that touch no other request's go first; the account row is locked last,
-- by the UPDATE that adds the file's bytes, and the quota is read and
-- checked under that lock (a later statement of this function: a snapshot
-- taken after the lock, so every commit of the account on any node that
-- went before is seen). A refusal raises (SQLSTATE FS001, the holdings in
-- its DETAIL; FS002 a spent upload token): the statement, its own
-- transaction, then leaves nothing written. An idempotency key is taken
-- first, its row locked: a commit with the same key on another node has
-- then committed (and is replayed) or has not begun.
-- Lock order: the idempotency key, the account, then the upload token (as
-- a resumable upload's creation: the account, then the token).
-- Only adds: a node of an earlier schema never calls it.
CREATE FUNCTION filestore_commit_upload(
    p_id TEXT, p_account TEXT, p_name TEXT, p_folder TEXT, p_size BIGINT,
    p_type TEXT, p_private BOOLEAN, p_sha256 TEXT, p_blob_key TEXT,
    p_created_at BIGINT, p_expires_at BIGINT, p_inline BOOLEAN, p_metadata TEXT,
    p_data BYTEA, p_event TEXT, p_period TEXT, p_key TEXT, p_key_since BIGINT,
    p_token TEXT, p_max_storage BIGINT, p_max_uploads BIGINT,
    OUT replayed TEXT, OUT queued INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_file TEXT;
    v_at BIGINT;
    v_stored BIGINT;
    v_count BIGINT;
    v_reserved BIGINT;
    v_pending BIGINT;
BEGIN
    queued := 0;
    IF p_key IS NOT NULL THEN
        LOOP
            SELECT file_id, created_at INTO v_file, v_at FROM idempotency_keys
            WHERE account_id = p_account AND key = p_key FOR UPDATE;
            IF NOT FOUND THEN
                INSERT INTO idempotency_keys (account_id, key, file_id, created_at)
                VALUES (p_account, p_key, p_id, p_created_at) ON CONFLICT DO NOTHING;
                -- Else another commit inserted it meanwhile: read it again.
                EXIT WHEN FOUND;
            ELSE
                IF v_at >= p_key_since AND EXISTS (
                    SELECT 1 FROM files WHERE account_id = p_account AND id = v_file
                    AND (expires_at IS NULL OR expires_at > p_created_at)) THEN
                    replayed := v_file;
                    RETURN;
                END IF;
                UPDATE idempotency_keys SET file_id = p_id, created_at = p_created_at
                WHERE account_id = p_account AND key = p_key;
                EXIT;
            END IF;
        END LOOP;
    END IF;
    IF p_inline THEN
        INSERT INTO inline_blobs (blob_key, data) VALUES (p_blob_key, p_data);
    ELSE
        -- An upload guard made due (its node looked dead) is no guard any more.
        DELETE FROM blob_deletions WHERE blob_key = p_blob_key AND owner IS NOT NULL;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'upload guard of % is gone; the blob may have been collected',
                p_blob_key USING ERRCODE = 'FS003';
        END IF;
    END IF;
    INSERT INTO files (id, account_id, name, folder, size, content_type, private, sha256,
        blob_key, created_at, expires_at, inline, metadata)
    VALUES (p_id, p_account, p_name, p_folder, p_size, p_type, p_private, p_sha256,
        p_blob_key, p_created_at, p_expires_at, p_inline, p_metadata);
    INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
    SELECT 'msg_' || replace(gen_random_uuid()::TEXT, '-', ''), id, p_id, 'file.created',
        p_event, p_created_at, p_created_at
    FROM webhooks
    WHERE account_id = p_account AND 'file.created' = ANY(string_to_array(events, ','));
    GET DIAGNOSTICS queued = ROW_COUNT;
    -- Last, the account row: locked from here to the commit.
    UPDATE accounts SET storage_bytes = storage_bytes + p_size WHERE id = p_account
    RETURNING storage_bytes - p_size INTO v_stored;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'account % vanished', p_account USING ERRCODE = 'FS003';
    END IF;
    SELECT COALESCE((SELECT upload_count FROM usage_periods
                     WHERE account_id = p_account AND period = p_period), 0),
        COALESCE(SUM(length), 0), COUNT(*)
    INTO v_count, v_reserved, v_pending
    FROM tus_uploads
    WHERE account_id = p_account AND completed_at IS NULL AND expires_at > p_created_at;
    -- domain::quota::Quota::admit, which the caller applies to the DETAIL.
    IF v_stored::NUMERIC + v_reserved + p_size > p_max_storage
       OR v_count::NUMERIC + v_pending >= p_max_uploads THEN
        RAISE EXCEPTION 'quota' USING ERRCODE = 'FS001',
            DETAIL = format('%s %s %s %s', v_stored, v_count, v_reserved, v_pending);
    END IF;
    INSERT INTO usage_periods (account_id, period, upload_count) VALUES (p_account, p_period, 1)
    ON CONFLICT (account_id, period) DO UPDATE SET upload_count = usage_periods.upload_count + 1;
    IF p_token IS NOT NULL THEN
        UPDATE upload_tokens SET uploads_used = uploads_used + 1
        WHERE id = p_token AND revoked_at IS NULL AND uploads_used + uploads_open < max_uploads;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'upload token spent' USING ERRCODE = 'FS002';
        END IF;
    END IF;
END
$$;
