-- Two nodes committing uploads of the same accounts took turns: a commit
-- locks its accounts' rows first (`FOR NO KEY UPDATE`, for the quota) and
-- holds them to its end, its WAL flush included, so the other node's
-- statement waited out this one's whole work and flush (a third of the
-- commits' samples waited on `Lock:transactionid` at 0.5 CPU a node,
-- docs/decisions.md). Now a call without a path rule writes its uploads'
-- rows first (the inline bytes and the files, which are most of its work)
-- and locks the accounts after, judging each upload exactly as before
-- under those locks; the rows of an upload it refuses are deleted again in
-- the same transaction, so no one ever sees them. Another node's commit of
-- the same accounts now waits only for the judging, the counters and the
-- flush. A call with a path rule (one upload) goes as before: its check of
-- the path must not see its own row.
--
-- The files inserted before the locks are not counted by the statement
-- triggers of migration 0021 (whose `UPDATE accounts` would take the
-- account's row at once): around those statements the call sets
-- `filestore.uncounted` to its transaction's id (transaction-local, and
-- reset after each; a value set any other way never matches an id) and
-- adds its files to `file_count` in the same UPDATE that adds their bytes.
-- Arguments and outcomes as in 0024. What differs: an upload refused now
-- costs the writing and deleting of its rows (rare: the node checks the
-- quota before the body); a row conflict an early insert meets fails the
-- whole statement (as every insert of 0024 did, for an admitted upload);
-- a statement that gives up on a lock has written its rows first; and
-- commits of one account on several nodes hold its row together (`FOR KEY
-- SHARE`), which makes a multixact of it, as foreign keys do. While
-- someone waits to take an account's row `FOR UPDATE`, calls go as before
-- (below). A node of schema 28 calls this unchanged and never sets the
-- setting, so its rows are counted as before.
--
-- `p_at_path[i] = 'absent' AND EXISTS (...)` evaluated the EXISTS for every
-- upload without a path rule (NULL AND false is false, so SQL must look):
-- now the test is whether the rule is 'absent' at all first.

CREATE OR REPLACE FUNCTION filestore_commit(
    p_account TEXT[], p_end INTEGER[], p_id TEXT[], p_name TEXT[], p_folder TEXT[],
    p_size BIGINT[], p_type TEXT[], p_private BOOLEAN[], p_sha256 TEXT[], p_md5 TEXT[],
    p_blob_key TEXT[], p_created_at BIGINT[], p_expires_at BIGINT[], p_inline BOOLEAN[],
    p_metadata TEXT[], p_attrs TEXT[], p_data BYTEA[], p_event TEXT[], p_period TEXT,
    p_token TEXT[],
    p_max_storage BIGINT[], p_max_uploads BIGINT[], p_key TEXT, p_key_since BIGINT,
    p_admitted BOOLEAN, p_strangers BOOLEAN, p_bounded BOOLEAN, p_at_path TEXT[],
    p_kept_ms BIGINT)
RETURNS TABLE (n INTEGER, code TEXT, detail TEXT, message TEXT, queued INTEGER,
    replayed TEXT, replaced TEXT[])
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
    -- What a replace took away: the files' bytes, their events queued.
    v_freed BIGINT;
    v_gone_events INTEGER;
    -- Whether the uploads' rows are written before the accounts are locked
    -- (every call without a path rule).
    v_early BOOLEAN;
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
    IF v_uploads <> 1 AND EXISTS (SELECT 1 FROM unnest(p_at_path) r WHERE r IS NOT NULL) THEN
        RAISE EXCEPTION 'a path rule goes with one upload' USING ERRCODE = 'FS003';
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
    -- Not while someone waits to take an account's row FOR UPDATE (an
    -- account's removal, or a node of an older release taking it for its
    -- commit; it then holds the row's tuple lock, `AccessExclusiveLock`):
    -- a `FOR KEY SHARE` never queues behind such a waiter, so commits
    -- taking it one after another on several nodes could keep it waiting
    -- for ever. Then the locks first, as before, which queue behind it.
    v_early := NOT EXISTS (SELECT 1 FROM unnest(p_at_path) r WHERE r IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM pg_locks
                        WHERE locktype = 'tuple' AND relation = 'accounts'::regclass
                          AND mode = 'AccessExclusiveLock'
                          AND database = (SELECT oid FROM pg_database
                                          WHERE datname = current_database()));
    BEGIN
        -- The uploads' rows first, before any account is locked: another
        -- node's commit of the same accounts meanwhile goes on. Uncounted
        -- by the triggers (the UPDATE of the accounts below counts those
        -- kept); an upload refused below has its rows deleted again.
        IF v_early THEN
            -- The rows' key checks share each account's row (`FOR KEY
            -- SHARE`, which another commit's `FOR NO KEY UPDATE` leaves
            -- be): taken here one at a time in byte order first, so that
            -- a row held past `lock_timeout` (a delete of the account) is
            -- named as below.
            FOR a IN 1 .. v_accounts LOOP
                v_at := a;
                PERFORM 1 FROM accounts WHERE id = p_account[a] FOR KEY SHARE;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'account % vanished', p_account[a] USING ERRCODE = 'FS003';
                END IF;
            END LOOP;
            v_at := 0;
            INSERT INTO inline_blobs (blob_key, data)
            SELECT p_blob_key[i], p_data[i] FROM generate_subscripts(p_id, 1) i
            WHERE p_inline[i];
            PERFORM set_config('filestore.uncounted', txid_current()::TEXT, true);
            INSERT INTO files (id, account_id, name, folder, size, content_type, private,
                sha256, md5, blob_key, created_at, expires_at, inline, metadata, attrs)
            SELECT p_id[i], p_account[v_of[i]], p_name[i], p_folder[i], p_size[i], p_type[i],
                p_private[i], p_sha256[i], p_md5[i], p_blob_key[i], p_created_at[i],
                p_expires_at[i], p_inline[i], p_metadata[i], p_attrs[i]
            FROM generate_subscripts(p_id, 1) i;
            PERFORM set_config('filestore.uncounted', '', true);
        END IF;
        -- The files a replace deletes are locked before the account, as
        -- every delete locks them (files, then the account): a DELETE of
        -- one of them at once waits here, or this waits for it.
        IF p_at_path[1] = 'replace' THEN
            PERFORM 1 FROM files WHERE id IN (
                SELECT id FROM filestore_files_at(p_account[1], p_folder[1], p_name[1],
                    p_created_at[1]))
            ORDER BY id FOR UPDATE;
        END IF;
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
            replaced := NULL;
            v_reserved := 0;
            v_pending := 0;
            IF coalesce(p_at_path[i], '') = 'absent' AND EXISTS (
                SELECT 1 FROM filestore_files_at(p_account[v_of[i]], p_folder[i], p_name[i],
                    p_created_at[i])) THEN
                code := 'FS004';
                message := 'the path holds a file';
            ELSIF p_admitted THEN
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
                IF p_at_path[i] = 'replace' THEN
                    -- Each file at the path goes as a DELETE takes it
                    -- (db/postgres/files.rs, after_removal): its event,
                    -- keys, bytes and inline bytes; its blob queued
                    -- `p_kept_ms` ahead for the collector, so that a read
                    -- that found its row still reads it whole.
                    WITH gone AS (
                        DELETE FROM files WHERE id IN (
                            SELECT id FROM filestore_files_at(p_account[v_of[i]], p_folder[i],
                                p_name[i], p_created_at[i]))
                        RETURNING *),
                    events AS (
                        INSERT INTO webhook_events (id, webhook_id, file_id, type, data,
                            created_at, next_at)
                        SELECT 'msg_' || replace(gen_random_uuid()::TEXT, '-', ''), w.id, g.id,
                            'file.deleted', json_build_object('id', g.id,
                                'account_id', g.account_id, 'name', g.name, 'folder', g.folder,
                                'size', g.size, 'content_type', g.content_type,
                                'private', g.private, 'sha256', g.sha256, 'md5', g.md5,
                                'blob_key', g.blob_key, 'created_at', g.created_at,
                                'expires_at', g.expires_at, 'inline', g.inline,
                                'metadata', (CASE WHEN g.metadata = '' THEN '{}'
                                             ELSE g.metadata END)::json,
                                'attrs', coalesce(g.attrs, '{}')::json)::TEXT,
                            p_created_at[i], p_created_at[i]
                        FROM gone g JOIN webhooks w ON w.account_id = g.account_id
                            AND 'file.deleted' = ANY(string_to_array(w.events, ','))
                        ORDER BY g.created_at, g.id, w.id
                        RETURNING 1),
                    keys AS (
                        DELETE FROM idempotency_keys WHERE file_id IN (SELECT id FROM gone)),
                    kept AS (
                        INSERT INTO blob_deletions (blob_key, due_at, owner)
                        SELECT blob_key, p_created_at[i] + p_kept_ms, NULL::INTEGER
                        FROM gone WHERE NOT inline
                        ON CONFLICT (blob_key) DO UPDATE
                        SET due_at = LEAST(blob_deletions.due_at, EXCLUDED.due_at), owner = NULL),
                    inline AS (
                        DELETE FROM inline_blobs
                        WHERE blob_key IN (SELECT blob_key FROM gone WHERE inline))
                    SELECT (SELECT array_agg(id ORDER BY created_at, id) FROM gone),
                        (SELECT coalesce(sum(size), 0) FROM gone),
                        (SELECT count(*) FROM events)
                    INTO replaced, v_freed, v_gone_events;
                    v_stored[v_of[i]] := v_stored[v_of[i]] - v_freed;
                    v_added[v_of[i]] := v_added[v_of[i]] - v_freed;
                    queued := queued + v_gone_events;
                END IF;
                v_events := v_events OR queued > 0;
            END IF;
            RETURN NEXT;
        END LOOP;
        IF v_early AND cardinality(v_ok) < v_uploads THEN
            PERFORM set_config('filestore.uncounted', txid_current()::TEXT, true);
            DELETE FROM files WHERE id = ANY(ARRAY(
                SELECT p_id[i] FROM generate_subscripts(p_id, 1) i WHERE NOT (i = ANY(v_ok))));
            PERFORM set_config('filestore.uncounted', '', true);
            DELETE FROM inline_blobs WHERE blob_key = ANY(ARRAY(
                SELECT p_blob_key[i] FROM generate_subscripts(p_id, 1) i
                WHERE p_inline[i] AND NOT (i = ANY(v_ok))));
        END IF;
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
        IF NOT v_early THEN
            INSERT INTO inline_blobs (blob_key, data)
            SELECT p_blob_key[i], p_data[i] FROM unnest(v_ok) i WHERE p_inline[i];
            INSERT INTO files (id, account_id, name, folder, size, content_type, private,
                sha256, md5, blob_key, created_at, expires_at, inline, metadata, attrs)
            SELECT p_id[i], p_account[v_of[i]], p_name[i], p_folder[i], p_size[i], p_type[i],
                p_private[i], p_sha256[i], p_md5[i], p_blob_key[i], p_created_at[i],
                p_expires_at[i], p_inline[i], p_metadata[i], p_attrs[i]
            FROM unnest(v_ok) i;
        END IF;
        IF v_events THEN
            INSERT INTO webhook_events (id, webhook_id, file_id, type, data, created_at, next_at)
            SELECT 'msg_' || replace(gen_random_uuid()::TEXT, '-', ''), w.id, p_id[o.i],
                'file.created', p_event[o.i], p_created_at[o.i], p_created_at[o.i]
            FROM unnest(v_ok) WITH ORDINALITY AS o(i, k), webhooks w
            WHERE v_hooks[v_of[o.i]] > 0 AND w.account_id = p_account[v_of[o.i]]
              AND 'file.created' = ANY(string_to_array(w.events, ','))
            ORDER BY o.k, w.id;
        END IF;
        UPDATE accounts a SET storage_bytes = GREATEST(0, a.storage_bytes + d.added),
            file_count = a.file_count + CASE WHEN v_early THEN d.done ELSE 0 END
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

-- The statement triggers of migration 0021, skipping the statements of a
-- commit that counts its files itself (above).
CREATE OR REPLACE FUNCTION files_counted_in() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
BEGIN
    IF current_setting('filestore.uncounted', true) = txid_current_if_assigned()::TEXT THEN
        RETURN NULL;
    END IF;
    FOR r IN SELECT account_id, COUNT(*) AS n FROM new_files GROUP BY account_id
             ORDER BY account_id LOOP
        UPDATE accounts SET file_count = file_count + r.n WHERE id = r.account_id;
    END LOOP;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION files_counted_out() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
BEGIN
    IF current_setting('filestore.uncounted', true) = txid_current_if_assigned()::TEXT THEN
        RETURN NULL;
    END IF;
    FOR r IN SELECT account_id, COUNT(*) AS n FROM old_files GROUP BY account_id
             ORDER BY account_id LOOP
        UPDATE accounts SET file_count = file_count - r.n WHERE id = r.account_id;
    END LOOP;
    RETURN NULL;
END $$;
