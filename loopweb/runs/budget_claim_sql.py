"""The locked part of a claim under provider budgets on PostgreSQL, as one function call.

Python picks the claim's candidates in order (``loopweb.runs.budgets.pick``) from an unlocked
read; this function then, in one statement and its own commit, locks the budgets' rows, counts
their jobs in flight afresh (each statement of a PL/pgSQL function reads a new snapshot, so it
sees every claim that held the lock before), takes the candidates that still fit, leases them
with ``SKIP LOCKED`` and records their starts and turns on the budgets. The lock is held for
the function's run inside the database, never across a round trip to a web process.

It returns the ids it leased; NULL when a job in flight belongs to a combination the caller did
not map to its budgets, and ``{-1}`` when every candidate that fitted had been taken by other
claims since the caller read them (the caller reads again and calls again, either way).
"""

from loopweb.runs.budgets import TURNS_KEPT, WINDOW

FUNCTION = "loopweb_budget_claim"

# Only the constants above are formatted in.
INSTALL = f"""
CREATE OR REPLACE FUNCTION {FUNCTION}(
    p_driver bigint, p_limit integer, p_now timestamptz, p_expires timestamptz,
    p_second bigint, p_clock double precision,
    p_budgets jsonb, p_combinations jsonb, p_candidates jsonb
) RETURNS bigint[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    room jsonb := '{{}}';
    flying jsonb := '{{}}';
    budget jsonb;
    row record;
    candidate jsonb;
    member jsonb;
    fits boolean;
    chosen bigint[] := '{{}}';
    taken integer := 0;
    started integer;
BEGIN
    -- Lock the budgets: a claim counting their jobs in flight while another's lease of one is
    -- uncommitted would start one past a cap.
    PERFORM 1 FROM runs_providerbudget
    WHERE id IN (SELECT (b->>'id')::bigint FROM jsonb_array_elements(p_budgets) AS b)
    ORDER BY id FOR NO KEY UPDATE;
    -- Each budget's jobs in flight, counted afresh by combination.
    FOR row IN
        SELECT combination_id, count(*) AS n FROM runs_job
        WHERE status IN ('pending', 'dispatched', 'starting', 'running')
        GROUP BY combination_id
    LOOP
        IF row.combination_id IS NULL THEN CONTINUE; END IF;
        IF NOT p_combinations ? row.combination_id::text THEN RETURN NULL; END IF;
        FOR member IN SELECT * FROM jsonb_array_elements(p_combinations->(row.combination_id::text))
        LOOP
            flying := flying || jsonb_build_object(member #>> '{{}}',
                COALESCE((flying->>(member #>> '{{}}'))::integer, 0) + row.n);
        END LOOP;
    END LOOP;
    -- Room: the in-flight cap less the jobs in flight, the per-minute cap less the starts of the
    -- rolling minute, whichever is smaller.
    FOR budget IN SELECT * FROM jsonb_array_elements(p_budgets) LOOP
        SELECT COALESCE(sum(n::integer), 0) INTO started
        FROM runs_providerbudget, jsonb_each_text(starts) AS s(second, n)
        WHERE id = (budget->>'id')::bigint AND second::bigint >= p_second - {WINDOW};
        room := room || jsonb_build_object(budget->>'id', LEAST(
            COALESCE((budget->>'cap')::integer
                - COALESCE((flying->>(budget->>'id'))::integer, 0), 2147483647),
            COALESCE((budget->>'minute')::integer - started, 2147483647)));
    END LOOP;
    FOR candidate IN SELECT * FROM jsonb_array_elements(p_candidates) LOOP
        EXIT WHEN cardinality(chosen) >= p_limit;
        fits := true;
        FOR member IN SELECT * FROM jsonb_array_elements(candidate->'budgets') LOOP
            IF room ? (member #>> '{{}}') AND (room->>(member #>> '{{}}'))::integer <= 0 THEN
                fits := false;
            END IF;
        END LOOP;
        CONTINUE WHEN NOT fits;
        -- Still queued and not being taken by a claim outside the budgets' lock.
        PERFORM 1 FROM runs_job WHERE id = (candidate->>'id')::bigint AND status = 'queued'
        FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            taken := taken + 1;
            CONTINUE;
        END IF;
        chosen := chosen || (candidate->>'id')::bigint;
        FOR member IN SELECT * FROM jsonb_array_elements(candidate->'budgets') LOOP
            IF room ? (member #>> '{{}}') THEN
                room := jsonb_set(room, ARRAY[member #>> '{{}}'],
                    to_jsonb((room->>(member #>> '{{}}'))::integer - 1));
            END IF;
        END LOOP;
    END LOOP;
    IF cardinality(chosen) = 0 THEN
        -- Nothing fitting was left of what the caller read: it reads again.
        IF taken > 0 THEN RETURN ARRAY[-1]; END IF;
        RETURN chosen;
    END IF;
    UPDATE runs_job SET status = 'pending', lease_holder_id = p_driver,
        lease_expires_at = p_expires, updated_at = p_now
    WHERE id = ANY(chosen) AND status = 'queued';
    -- Each budget's starts this second and the sources it served, for its rolling minute and
    -- its turns.
    FOR budget IN SELECT * FROM jsonb_array_elements(p_budgets) LOOP
        SELECT count(*) INTO started FROM jsonb_array_elements(p_candidates) AS c
        WHERE (c->>'id')::bigint = ANY(chosen) AND c->'budgets' @> jsonb_build_array(budget->'id');
        CONTINUE WHEN started = 0;
        UPDATE runs_providerbudget SET
            starts = COALESCE((
                SELECT jsonb_object_agg(second, n) FROM jsonb_each(starts) AS s(second, n)
                WHERE second::bigint >= p_second - {WINDOW} AND second::bigint <> p_second
            ), '{{}}') || jsonb_build_object(p_second::text,
                COALESCE((starts->>(p_second::text))::integer, 0) + started),
            turns = (
                SELECT COALESCE(jsonb_object_agg(source, at), '{{}}') FROM (
                    SELECT source, at FROM jsonb_each(turns || COALESCE((
                        SELECT jsonb_object_agg(c->>'source', p_clock + (ordinality * 1e-6))
                        FROM jsonb_array_elements(p_candidates) WITH ORDINALITY AS x(c, ordinality)
                        WHERE (c->>'id')::bigint = ANY(chosen)
                          AND c->'budgets' @> jsonb_build_array(budget->'id')
                    ), '{{}}')) AS t(source, at)
                    ORDER BY at::text::double precision DESC LIMIT {TURNS_KEPT}
                ) AS kept
            )
        WHERE id = (budget->>'id')::bigint;
    END LOOP;
    RETURN chosen;
END $$
"""  # noqa: S608

REMOVE = (
    f"DROP FUNCTION IF EXISTS {FUNCTION}(bigint, integer, timestamptz, timestamptz, bigint,"
    " double precision, jsonb, jsonb, jsonb)"
)
