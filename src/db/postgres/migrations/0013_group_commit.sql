-- A batch of an account's multipart uploads (of one period) committed in
-- one statement: one transaction, one WAL flush for all of them. A node's
-- group commit (`batch.rs`) calls it with the uploads of an account that
-- arrived while its previous batch was in flight.
--
-- Each upload is judged in the batch's order as `filestore_commit_upload`
-- (migration 0012) judges one: its blob's upload guard, the quota with what
-- the uploads before it in the batch added (and what resumable uploads hold
-- at its own time), its upload token's use. A
-- refused upload writes nothing and is returned as its outcome (its
-- SQLSTATE, DETAIL and message, as that function would raise them); the
-- others are written together at the end, and the account's counters move
-- once. The account row is locked first (as 0012's UPDATE locks it: FOR NO
-- KEY UPDATE, which other rows' foreign keys to it do not wait for) and held
-- to the commit, so the judging reads the account's state after every
-- commit before it, on any node. Lock order: the account, the upload
-- tokens (in id order, as `tokens.rs` takes several), then the upload
-- guards (each an upload's own: nothing else waits for two of them).
-- Uploads with an idempotency key do not come here (their key is locked
-- before the account). Outcomes in the batch's order (`n` from 1); a
-- committed upload's `queued` is the events it queued.
-- The function only adds: a node of an earlier schema never calls it. The
-- storage settings of `inline_blobs` below change nothing a node reads.
CREATE FUNCTION filestore_commit_uploads(
    p_id TEXT[], p_account TEXT, p_name TEXT[], p_folder TEXT[], p_size BIGINT[],
    p_type TEXT[], p_private BOOLEAN[], p_sha256 TEXT[], p_blob_key TEXT[],
    p_created_at BIGINT[], p_expires_at BIGINT[], p_inline BOOLEAN[], p_metadata TEXT[],
    p_data BYTEA[], p_event TEXT[], p_period TEXT, p_token TEXT[],
    p_max_storage BIGINT[], p_max_uploads BIGINT[])
RETURNS TABLE (n INTEGER, code TEXT, detail TEXT, message TEXT, queued INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_stored BIGINT;
    v_count BIGINT;
    v_reserved BIGINT;
    v_pending BIGINT;
    v_hooks INTEGER;
    v_open_ends BIGINT[];
    v_open_lengths BIGINT[];
    v_guards TEXT[];
    v_ok INTEGER[] := '{}';
    v_added BIGINT := 0;
BEGIN
    SELECT storage_bytes INTO v_stored FROM accounts WHERE id = p_account FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'account % vanished', p_account USING ERRCODE = 'FS003';
    END IF;
    PERFORM 1 FROM upload_tokens WHERE id = ANY(p_token) ORDER BY id FOR UPDATE;
    v_count := COALESCE((SELECT upload_count FROM usage_periods
                         WHERE account_id = p_account AND period = p_period), 0);
    -- The incomplete resumable uploads unexpired at the batch's earliest
    -- time; each upload counts those unexpired at its own.
    SELECT array_agg(expires_at), array_agg(length) INTO v_open_ends, v_open_lengths
    FROM tus_uploads
    WHERE account_id = p_account AND completed_at IS NULL
      AND expires_at > (SELECT min(t) FROM unnest(p_created_at) t);
    -- The upload guards still there (one made due, its node looked dead,
    -- is no guard any more), locked until they go below.
    SELECT array_agg(g.blob_key) INTO v_guards FROM (
        SELECT blob_key FROM blob_deletions
        WHERE blob_key = ANY(p_blob_key) AND owner IS NOT NULL FOR UPDATE) g;
    SELECT count(*) INTO v_hooks FROM webhooks
    WHERE account_id = p_account AND 'file.created' = ANY(string_to_array(events, ','));
    FOR i IN 1 .. coalesce(cardinality(p_id), 0) LOOP
        n := i;
        code := NULL;
        detail := NULL;
        message := NULL;
        queued := 0;
        v_reserved := 0;
        v_pending := 0;
        IF v_open_ends IS NOT NULL THEN
            SELECT COALESCE(SUM(l), 0), COUNT(*) INTO v_reserved, v_pending
            FROM unnest(v_open_ends, v_open_lengths) AS o(e, l) WHERE e > p_created_at[i];
        END IF;
        IF NOT p_inline[i] AND NOT (p_blob_key[i] = ANY(coalesce(v_guards, '{}'))) THEN
            code := 'FS003';
            message := format('upload guard of %s is gone; the blob may have been collected',
                p_blob_key[i]);
        -- domain::quota::Quota::admit, which the caller applies to the DETAIL.
        ELSIF v_stored::NUMERIC + v_reserved + p_size[i] > p_max_storage[i]
           OR v_count::NUMERIC + v_pending >= p_max_uploads[i] THEN
            code := 'FS001';
            message := 'quota';
            detail := format('%s %s %s %s', v_stored, v_count, v_reserved, v_pending);
        ELSE
            IF p_token[i] IS NOT NULL THEN
                UPDATE upload_tokens SET uploads_used = uploads_used + 1
                WHERE id = p_token[i] AND revoked_at IS NULL
                  AND uploads_used + uploads_open < max_uploads;
                IF NOT FOUND THEN
                    code := 'FS002';
                    message := 'upload token spent';
                END IF;
            END IF;
            IF code IS NULL THEN
                v_ok := v_ok || i;
                v_stored := v_stored + p_size[i];
                v_added := v_added + p_size[i];
                v_count := v_count + 1;
                queued := v_hooks;
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF cardinality(v_ok) = 0 THEN
        RETURN;
    END IF;
    DELETE FROM blob_deletions WHERE owner IS NOT NULL AND blob_key = ANY(
        ARRAY(SELECT p_blob_key[i] FROM unnest(v_ok) i WHERE NOT p_inline[i]));
    INSERT INTO inline_blobs (blob_key, data)
    SELECT p_blob_key[i], p_data[i] FROM unnest(v_ok) i WHERE p_inline[i];
    INSERT INTO files (id, account_id, name, folder, size, content_type, private, sha256,
        blob_key, created_at, expires_at, inline, metadata)
    SELECT p_id[i], p_account, p_name[i], p_folder[i], p_size[i], p_type[i], p_private[i],
        p_sha256[i], p_blob_key[i], p_created_at[i], p_expires_at[i], p_inline[i],
        p_metadata[i]
    FROM unnest(v_ok) i;
    IF v_hooks > 0 THEN
        INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
        SELECT 'msg_' || replace(gen_random_uuid()::TEXT, '-', ''), w.id, p_id[i],
            'file.created', p_event[i], p_created_at[i], p_created_at[i]
        FROM unnest(v_ok) WITH ORDINALITY AS o(i, k), webhooks w
        WHERE w.account_id = p_account AND 'file.created' = ANY(string_to_array(w.events, ','))
        ORDER BY o.k, w.id;
    END IF;
    UPDATE accounts SET storage_bytes = storage_bytes + v_added WHERE id = p_account;
    INSERT INTO usage_periods (account_id, period, upload_count)
    VALUES (p_account, p_period, cardinality(v_ok))
    ON CONFLICT (account_id, period)
    DO UPDATE SET upload_count = usage_periods.upload_count + EXCLUDED.upload_count;
END
$$;

-- A small file's bytes kept in its row's page, not compressed: a row up to
-- the largest target (8160 bytes) is not TOASTed, and a larger one goes
-- out of line as it is (pglz spends CPU on every upload to shrink bytes
-- that are mostly compressed already: images, archives).
ALTER TABLE inline_blobs SET (toast_tuple_target = 8160);
ALTER TABLE inline_blobs ALTER COLUMN data SET STORAGE EXTERNAL;
