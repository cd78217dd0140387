-- MD5 beside SHA-256, and one function that commits files.
--
-- Each file's hex MD5 (lower case), computed while its bytes arrive; NULL
-- means not yet known (a file stored before this migration: a background
-- pass fills those in later). A resumable upload's running MD5 is kept
-- beside its SHA-256 state between PATCHes (NULL for an upload begun
-- before: its file's MD5 stays NULL).
ALTER TABLE files ADD COLUMN md5 TEXT;
ALTER TABLE tus_uploads ADD COLUMN md5_state TEXT;

-- Every commit of a file goes through `filestore_commit`, the one place
-- that inserts into `files`: a node's commit bus (several accounts' uploads
-- in one statement, `bus.rs`), an account's batch (`batch.rs`), an upload
-- with an idempotency key, one committed alone (`commit.rs`), and the
-- commits a node judges itself under the account row's lock (a resumable
-- upload completing, a stranger's upload: `files.rs`). It replaces
-- `filestore_commit_upload` (migration 0012), `filestore_commit_uploads`
-- (0013) and `filestore_commit_accounts` (0014 to 0016), dropped below, so
-- a rule of every new file (say, that it replaces the files at its path)
-- is written once here.
--
-- The uploads come ordered by account (`p_account`, each named once, in
-- byte order: every node sorts the same way, so two statements lock the
-- account rows in one order); account `a` has the uploads from just past
-- `p_end[a - 1]` to `p_end[a]`. Each upload is judged in the order given,
-- with only its own account's uploads before it, exactly as 0016 judged
-- it: its blob's upload guard (one made due, its node looked dead, is no
-- guard any more), the quota with what those added (and what resumable
-- uploads hold at its own time), its upload token's use. A refused upload
-- writes nothing and is returned as its outcome (SQLSTATE FS001 for the
-- quota, the holdings in `detail`; FS002 for a spent token; FS003 for a
-- guard gone); the others are written together at the end, each kind of
-- row once, and the accounts' counters move once each. Outcomes come in
-- the uploads' order (`n` from 1 over them all); a committed upload's
-- `queued` is the events it queued.
--
-- `p_key` (with one upload only): its idempotency key, used since
-- `p_key_since`. The key's row is taken first, before the account: a
-- commit with the same key on another node has then committed (and its
-- file is returned as `replayed`, nothing written) or has not begun. The
-- key points to the new file once committed; a refused upload leaves it
-- as it was.
--
-- `p_admitted`: the caller judged the uploads itself, in its transaction,
-- under the account row's lock (a resumable upload completing: admitted at
-- its creation, its row guards its blob; a stranger's upload, judged
-- against the strangers' share): no guard, quota or token here.
-- `p_strangers`: the uploads count in the strangers' share of the period's
-- uploads (`usage_periods.stranger_uploads`, migration 0017).
--
-- `p_bounded`: no lock is waited for past 100 ms (`lock_timeout`, for the
-- rest of the transaction: the bus's statement is a transaction of its
-- own): a row of one account held long by another transaction (a delete of
-- many files, say) fails the statement (SQLSTATE 55P03, the account in
-- DETAIL), and the node commits each account's uploads on its own instead.
--
-- Lock order: an idempotency key, the accounts (one by one, in the order
-- given: byte order), then every upload token (id order), then the upload
-- guards. Nothing locks a token or a guard and then an account, and tokens
-- and guards are an account's own, so two statements meet first on an
-- account row.
CREATE OR REPLACE FUNCTION filestore_commit(
    p_account TEXT[], p_end INTEGER[], p_id TEXT[], p_name TEXT[], p_folder TEXT[],
    p_size BIGINT[], p_type TEXT[], p_private BOOLEAN[], p_sha256 TEXT[], p_md5 TEXT[],
    p_blob_key TEXT[], p_created_at BIGINT[], p_expires_at BIGINT[], p_inline BOOLEAN[],
    p_metadata TEXT[], p_data BYTEA[], p_event TEXT[], p_period TEXT, p_token TEXT[],
    p_max_storage BIGINT[], p_max_uploads BIGINT[], p_key TEXT, p_key_since BIGINT,
    p_admitted BOOLEAN, p_strangers BOOLEAN, p_bounded BOOLEAN)
RETURNS TABLE (n INTEGER, code TEXT, detail TEXT, message TEXT, queued INTEGER,
    replayed TEXT)
LANGUAGE plpgsql AS $$
DECLARE
    v_accounts INTEGER := coalesce(cardinality(p_account), 0);
    v_uploads INTEGER := coalesce(cardinality(p_id), 0);
    -- Each upload's account (its place in `p_account`).
    v_of INTEGER[] := '{}';
    -- Per account, in `p_account`'s order.
    v_stored BIGINT[];
    v_count BIGINT[];
    v_hooks INTEGER[];
    v_added BIGINT[];
    v_done INTEGER[];
    -- The incomplete resumable uploads unexpired at the earliest upload's
    -- time: whose (a place in `p_account`), until when, how long.
    v_open_of INTEGER[];
    v_open_ends BIGINT[];
    v_open_lengths BIGINT[];
    v_guards TEXT[];
    v_ok INTEGER[] := '{}';
    v_events BOOLEAN := false;
    v_reserved BIGINT;
    v_pending BIGINT;
    -- The account whose row is being locked (0 past that step).
    v_at INTEGER := 0;
    v_one BIGINT;
    v_lo INTEGER := 1;
    v_hi INTEGER;
    v_held TEXT;
    -- The idempotency key's row: inserted by this call, else its file and time.
    v_key_new BOOLEAN := false;
    v_key_file TEXT;
    v_key_at BIGINT;
BEGIN
    IF v_accounts <> coalesce(cardinality(p_end), 0)
       OR coalesce(p_end[v_accounts], 0) <> v_uploads THEN
        RAISE EXCEPTION 'the accounts do not cover the uploads' USING ERRCODE = 'FS003';
    END IF;
    FOR a IN 1 .. v_accounts LOOP
        v_hi := p_end[a];
        IF v_hi IS NULL OR v_hi < v_lo OR p_account[a] IS NULL
           OR (a > 1 AND p_account[a] COLLATE "C" <= p_account[a - 1] COLLATE "C") THEN
            RAISE EXCEPTION 'the accounts are not in order, each once' USING ERRCODE = 'FS003';
        END IF;
        v_of := v_of || array_fill(a, ARRAY[v_hi - v_lo + 1]);
        v_lo := v_hi + 1;
    END LOOP;
    IF v_accounts = 0 THEN
        RETURN;
    END IF;
    IF p_bounded THEN
        PERFORM set_config('lock_timeout', '100ms', true);
    END IF;
    IF p_key IS NOT NULL THEN
        IF v_uploads <> 1 THEN
            RAISE EXCEPTION 'an idempotency key goes with one upload' USING ERRCODE = 'FS003';
        END IF;
        LOOP
            SELECT file_id, created_at INTO v_key_file, v_key_at FROM idempotency_keys
            WHERE account_id = p_account[1] AND key = p_key FOR UPDATE;
            IF FOUND THEN
                IF v_key_at >= p_key_since AND EXISTS (
                    SELECT 1 FROM files WHERE account_id = p_account[1] AND id = v_key_file
                    AND (expires_at IS NULL OR expires_at > p_created_at[1])) THEN
                    n := 1;
                    queued := 0;
                    replayed := v_key_file;
                    RETURN NEXT;
                    RETURN;
                END IF;
                EXIT;
            END IF;
            INSERT INTO idempotency_keys (account_id, key, file_id, created_at)
            VALUES (p_account[1], p_key, p_id[1], p_created_at[1]) ON CONFLICT DO NOTHING;
            v_key_new := FOUND;
            -- Else another commit inserted it meanwhile: read it again.
            EXIT WHEN v_key_new;
        END LOOP;
    END IF;
    v_added := array_fill(0::BIGINT, ARRAY[v_accounts]);
    v_done := array_fill(0, ARRAY[v_accounts]);
    BEGIN
        -- One at a time, in the order given (byte order), as every
        -- statement of several accounts takes them: a lock held past
        -- `lock_timeout` is then known to be `v_at`'s.
        v_stored := array_fill(0::BIGINT, ARRAY[v_accounts]);
        FOR a IN 1 .. v_accounts LOOP
            v_at := a;
            SELECT storage_bytes INTO v_one FROM accounts WHERE id = p_account[a]
            FOR NO KEY UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'account % vanished', p_account[a] USING ERRCODE = 'FS003';
            END IF;
            v_stored[a] := v_one;
        END LOOP;
        v_at := 0;
        IF NOT p_admitted THEN
            PERFORM 1 FROM upload_tokens WHERE id = ANY(p_token) ORDER BY id FOR UPDATE;
            SELECT array_agg(coalesce(p.upload_count, 0) ORDER BY u.k) INTO v_count
            FROM unnest(p_account) WITH ORDINALITY AS u(id, k)
            LEFT JOIN usage_periods p ON p.account_id = u.id AND p.period = p_period;
            SELECT array_agg(u.k), array_agg(t.expires_at), array_agg(t.length)
            INTO v_open_of, v_open_ends, v_open_lengths
            FROM unnest(p_account) WITH ORDINALITY AS u(id, k)
            JOIN tus_uploads t ON t.account_id = u.id
            WHERE t.completed_at IS NULL
              AND t.expires_at > (SELECT min(c) FROM unnest(p_created_at) c);
            -- The upload guards still there, locked until they go below.
            SELECT array_agg(g.blob_key) INTO v_guards FROM (
                SELECT blob_key FROM blob_deletions
                WHERE blob_key = ANY(p_blob_key) AND owner IS NOT NULL FOR UPDATE) g;
        END IF;
        SELECT array_agg((SELECT count(*) FROM webhooks w
                          WHERE w.account_id = u.id
                            AND 'file.created' = ANY(string_to_array(w.events, ',')))::INTEGER
                         ORDER BY u.k)
        INTO v_hooks
        FROM unnest(p_account) WITH ORDINALITY AS u(id, k);
        FOR i IN 1 .. v_uploads LOOP
            n := i;
            code := NULL;
            detail := NULL;
            message := NULL;
            queued := 0;
            replayed := NULL;
            v_reserved := 0;
            v_pending := 0;
            IF p_admitted THEN
                NULL;
            ELSIF NOT p_inline[i] AND NOT (p_blob_key[i] = ANY(coalesce(v_guards, '{}'))) THEN
                code := 'FS003';
                message := format('upload guard of %s is gone; the blob may have been collected',
                    p_blob_key[i]);
            ELSE
                IF v_open_of IS NOT NULL AND v_of[i] = ANY(v_open_of) THEN
                    SELECT COALESCE(SUM(o.l), 0), COUNT(*) INTO v_reserved, v_pending
                    FROM unnest(v_open_of, v_open_ends, v_open_lengths) AS o(k, e, l)
                    WHERE o.k = v_of[i] AND o.e > p_created_at[i];
                END IF;
                -- domain::quota::Quota::admit, which the caller applies to the DETAIL.
                IF v_stored[v_of[i]]::NUMERIC + v_reserved + p_size[i] > p_max_storage[i]
                   OR v_count[v_of[i]]::NUMERIC + v_pending >= p_max_uploads[i] THEN
                    code := 'FS001';
                    message := 'quota';
                    detail := format('%s %s %s %s', v_stored[v_of[i]], v_count[v_of[i]],
                        v_reserved, v_pending);
                ELSIF p_token[i] IS NOT NULL THEN
                    UPDATE upload_tokens SET uploads_used = uploads_used + 1
                    WHERE id = p_token[i] AND revoked_at IS NULL
                      AND uploads_used + uploads_open < max_uploads;
                    IF NOT FOUND THEN
                        code := 'FS002';
                        message := 'upload token spent';
                    END IF;
                END IF;
            END IF;
            IF code IS NULL THEN
                v_ok := v_ok || i;
                v_stored[v_of[i]] := v_stored[v_of[i]] + p_size[i];
                v_added[v_of[i]] := v_added[v_of[i]] + p_size[i];
                IF NOT p_admitted THEN
                    v_count[v_of[i]] := v_count[v_of[i]] + 1;
                END IF;
                v_done[v_of[i]] := v_done[v_of[i]] + 1;
                queued := v_hooks[v_of[i]];
                v_events := v_events OR queued > 0;
            END IF;
            RETURN NEXT;
        END LOOP;
        IF cardinality(v_ok) = 0 THEN
            IF v_key_new THEN
                DELETE FROM idempotency_keys WHERE account_id = p_account[1] AND key = p_key;
            END IF;
            RETURN;
        END IF;
        IF NOT p_admitted THEN
            DELETE FROM blob_deletions WHERE owner IS NOT NULL AND blob_key = ANY(
                ARRAY(SELECT p_blob_key[i] FROM unnest(v_ok) i WHERE NOT p_inline[i]));
        END IF;
        INSERT INTO inline_blobs (blob_key, data)
        SELECT p_blob_key[i], p_data[i] FROM unnest(v_ok) i WHERE p_inline[i];
        INSERT INTO files (id, account_id, name, folder, size, content_type, private, sha256,
            md5, blob_key, created_at, expires_at, inline, metadata)
        SELECT p_id[i], p_account[v_of[i]], p_name[i], p_folder[i], p_size[i], p_type[i],
            p_private[i], p_sha256[i], p_md5[i], p_blob_key[i], p_created_at[i],
            p_expires_at[i], p_inline[i], p_metadata[i]
        FROM unnest(v_ok) i;
        IF v_events THEN
            INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
            SELECT 'msg_' || replace(gen_random_uuid()::TEXT, '-', ''), w.id, p_id[o.i],
                'file.created', p_event[o.i], p_created_at[o.i], p_created_at[o.i]
            FROM unnest(v_ok) WITH ORDINALITY AS o(i, k), webhooks w
            WHERE v_hooks[v_of[o.i]] > 0 AND w.account_id = p_account[v_of[o.i]]
              AND 'file.created' = ANY(string_to_array(w.events, ','))
            ORDER BY o.k, w.id;
        END IF;
        UPDATE accounts a SET storage_bytes = a.storage_bytes + d.added
        FROM unnest(p_account, v_added, v_done) AS d(id, added, done)
        WHERE a.id = d.id AND d.done > 0;
        INSERT INTO usage_periods (account_id, period, upload_count, stranger_uploads)
        SELECT d.id, p_period, d.done, CASE WHEN p_strangers THEN d.done ELSE 0 END
        FROM unnest(p_account, v_done) AS d(id, done)
        WHERE d.done > 0
        ON CONFLICT (account_id, period)
        DO UPDATE SET upload_count = usage_periods.upload_count + EXCLUDED.upload_count,
            stranger_uploads = usage_periods.stranger_uploads + EXCLUDED.stranger_uploads;
        IF p_key IS NOT NULL AND NOT v_key_new THEN
            UPDATE idempotency_keys SET file_id = p_id[1], created_at = p_created_at[1]
            WHERE account_id = p_account[1] AND key = p_key;
        END IF;
    EXCEPTION WHEN lock_not_available THEN
        -- Always raised again: the rows already returned stay in the
        -- result, so the handler must never end the function normally.
        -- The account named is the one whose row was being locked; past
        -- that step, the account of an upload whose token or guard another
        -- transaction holds (a waiter that took an earlier upload's as this
        -- block's locks went, a token's revocation say, makes that
        -- upload's account named instead: set apart for a while, and the
        -- next statement names the right one); else (a lock on a whole
        -- table: DDL, or a row written at the end) the first. SQLERRM says
        -- what it was. The probes skip rows another transaction holds (a
        -- table's lock is waited for up to `lock_timeout` again, and its
        -- error then names no account).
        IF v_at > 0 THEN
            v_held := p_account[v_at];
        ELSE
            FOR i IN 1 .. v_uploads LOOP
                IF (p_token[i] IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM upload_tokens WHERE id = p_token[i]
                        FOR UPDATE SKIP LOCKED)
                    AND EXISTS (SELECT 1 FROM upload_tokens WHERE id = p_token[i]))
                   OR (NOT p_inline[i] AND NOT EXISTS (
                        SELECT 1 FROM blob_deletions
                        WHERE blob_key = p_blob_key[i] AND owner IS NOT NULL
                        FOR UPDATE SKIP LOCKED)
                    AND EXISTS (SELECT 1 FROM blob_deletions
                                WHERE blob_key = p_blob_key[i] AND owner IS NOT NULL)) THEN
                    v_held := p_account[v_of[i]];
                    EXIT;
                END IF;
            END LOOP;
        END IF;
        v_held := coalesce(v_held, p_account[1]);
        RAISE EXCEPTION 'a lock was held past lock_timeout during account %''s uploads: %',
            v_held, SQLERRM
            USING ERRCODE = 'lock_not_available', DETAIL = v_held;
    END;
END
$$;

DROP FUNCTION filestore_commit_upload;
DROP FUNCTION filestore_commit_uploads;
DROP FUNCTION filestore_commit_accounts;
