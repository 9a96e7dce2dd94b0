# ruff: noqa: S608 - only the module's constants are formatted into the SQL
"""The locked part of a claim under provider budgets on PostgreSQL, as one function call.

Python reads the queued candidates unlocked and orders them (``loopweb.runs.budgets.pick``);
this function then, in one statement and its own commit, takes for each candidate its job row
and one free place of each budget it is under (``BudgetPlace``), all with ``SKIP LOCKED``, and
leases what it took. A budget allows as many jobs in flight as it has places below its cap, and
a job holds its place until it leaves flight (a trigger on the job rows frees it), so no claim
ever counts jobs in flight or waits for another claim: claims under one budget take different
places at once, as they take different jobs. The rolling minute is kept in shards
(``MINUTE_SHARDS``), each allowed its share of the per-minute cap and recording the starts of
every budget (its figures show them), taken the same way.

A place is free when no job holds it; the claim rechecks that on the row it locks (PostgreSQL
re-reads a row changed since the statement began before locking it), so two claims never take
one place. Where the cap fell below the places held (a back-off, an edit), no place is free
while a job holds one at or above the cap.

It returns the ids it leased; ``{-2, budget, …}`` when budgets it was given have no places (new,
changed or enabled again: the caller lays them out, ``budgeting.lay_out_places``, and calls
again), and ``{-1}`` when every candidate had been taken by other claims since the caller read
them (the caller reads again).
"""

from loopweb.runs.budgets import MINUTE_SHARDS, WINDOW
from loopweb.runs.models import IN_FLIGHT

FUNCTION = "loopweb_budget_claim"
STARTED = "loopweb_budget_started"
FREE = "loopweb_budget_place_free"
RESET = "loopweb_budget_places_reset"
CANDIDATES = "loopweb_budget_candidates"

_FLYING = ", ".join(f"'{status.value}'" for status in IN_FLIGHT[1:])

# A shard's starts of the rolling minute are below its share of the cap ``minute``. Written into
# the claim's statement (not a call of ``STARTED``): PL/pgSQL keeps its plan, where a call of a
# SQL function is planned again at each statement.
_SHARD_HAS_ROOM = f"""(
    SELECT COALESCE(sum(s.n::integer), 0) FROM jsonb_each_text(p.starts) AS s(second, n)
    WHERE s.second::bigint >= p_second - {WINDOW}
) < minute / {MINUTE_SHARDS} + CASE WHEN p.place < minute % {MINUTE_SHARDS} THEN 1 ELSE 0 END"""

_GROUP = "COALESCE(combination_id, 0)"

# Where a claim found no place of a budget: whether any of its budgets has no places laid out
# (new, changed or enabled again), which the caller lays out before calling again. Looked for
# only then, not at every claim; and only while the call has taken nothing (a place it took for
# an earlier job is written already, and that job is leased at the end).
_UNPLACED = """IF cardinality(chosen) = 0 THEN
                    SELECT array_agg(x.id ORDER BY x.id) INTO unplaced FROM (
                        SELECT (e->>'id')::bigint AS id, e->>'cap' AS cap
                        FROM jsonb_array_elements(p_budgets) AS e
                    ) AS x
                    WHERE x.cap IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM runs_budgetplace WHERE budget_id = x.id AND kind = 0
                    ) OR NOT EXISTS (
                        SELECT 1 FROM runs_budgetplace WHERE budget_id = x.id AND kind = 1);
                    IF unplaced IS NOT NULL THEN
                        RETURN ARRAY[-2] || unplaced;  -- these have no places yet
                    END IF;
                END IF;"""

# Only the constants above are formatted in.
INSTALL = [
    # The candidates a claim orders (``loopweb.runs.claim``): the oldest ``p_limit`` queued jobs
    # of each origin and combination, oldest first, by a skip scan of job_queued_by_origin (each
    # (origin, combination) is two index probes, however many jobs it has queued). A function so
    # that its plan is kept by the connection, not made again at every claim; the cell comes as
    # text, read once per distinct cell by the caller.
    f"""
CREATE OR REPLACE FUNCTION {CANDIDATES}(p_limit integer)
RETURNS TABLE (job_id bigint, job_origin text, job_combination bigint, job_cell text)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
    WITH RECURSIVE groups (origin, combination) AS (
        (SELECT j.origin, {_GROUP} FROM runs_job AS j WHERE j.status = 'queued'
         ORDER BY j.origin, {_GROUP} LIMIT 1)
        UNION ALL
        SELECT next.origin, next.combination FROM groups, LATERAL (
            SELECT j.origin, {_GROUP} AS combination FROM runs_job AS j
            WHERE j.status = 'queued'
              AND (j.origin, {_GROUP}) > (groups.origin, groups.combination)
            ORDER BY j.origin, {_GROUP} LIMIT 1
        ) AS next
    )
    SELECT job.id, job.origin::text, job.combination_id, job.combination_cell::text
    FROM groups, LATERAL (
        SELECT j.id, j.origin, j.combination_id, j.combination_cell FROM runs_job AS j
        WHERE j.status = 'queued' AND j.origin = groups.origin AND {_GROUP} = groups.combination
        ORDER BY j.origin, {_GROUP}, j.id LIMIT p_limit
    ) AS job
    ORDER BY job.id;
END $$""",
    f"""
CREATE OR REPLACE FUNCTION {STARTED}(p_starts jsonb, p_since bigint) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT COALESCE(sum(n::integer), 0)::integer FROM jsonb_each_text(p_starts) AS s(second, n)
    WHERE second::bigint >= p_since
$$""",
    f"""
CREATE OR REPLACE FUNCTION {FUNCTION}(
    p_driver bigint, p_limit integer, p_now timestamptz, p_expires timestamptz,
    p_second bigint, p_clock double precision, p_budgets jsonb, p_candidates jsonb
) RETURNS bigint[] LANGUAGE plpgsql VOLATILE
-- Generic plans, and the queued status compared with a variable: a candidate's job is found by
-- its primary key, never by reading every queued job through a partial index whose row estimate
-- lags a queue that fills and empties within seconds.
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    caps jsonb := '{{}}';
    budget jsonb;
    candidate jsonb;
    member jsonb;
    b bigint;
    job bigint;
    cap integer;
    minute integer;
    found_place bigint;
    flights bigint[];
    minutes bigint[];
    fits boolean;
    full_ bigint[] := '{{}}';
    chosen bigint[] := '{{}}';
    ids bigint[];
    pos bigint := 0;
    queued_ text := 'queued';
    unplaced bigint[];
BEGIN
    SELECT COALESCE(jsonb_object_agg(x->>'id', x), '{{}}') INTO caps
    FROM jsonb_array_elements(p_budgets) AS x;
    SELECT array_agg((c->>'id')::bigint ORDER BY n) INTO ids
    FROM jsonb_array_elements(p_candidates) WITH ORDINALITY AS x(c, n);
    LOOP
        EXIT WHEN cardinality(chosen) >= p_limit;
        -- The next candidate still queued, not being taken by another claim, and under no
        -- budget found full in this call: one statement, however many were taken meanwhile.
        SELECT x.n, j.id INTO pos, job
        FROM unnest(ids) WITH ORDINALITY AS x(id, n) JOIN runs_job AS j ON j.id = x.id
        WHERE x.n > pos AND j.status = queued_ AND (cardinality(full_) = 0 OR NOT (ARRAY(
            SELECT m::bigint FROM jsonb_array_elements_text(
                p_candidates->(x.n::integer - 1)->'budgets') AS m) && full_))
        ORDER BY x.n LIMIT 1 FOR UPDATE OF j SKIP LOCKED;
        EXIT WHEN NOT FOUND;
        candidate := p_candidates->(pos::integer - 1);
        fits := true;
        flights := '{{}}';
        minutes := '{{}}';
        FOR member IN SELECT * FROM jsonb_array_elements(candidate->'budgets') LOOP
            b := (member #>> '{{}}')::bigint;
            budget := caps->(b::text);
            CONTINUE WHEN budget IS NULL;
            cap := (budget->>'cap')::integer;
            minute := (budget->>'minute')::integer;
            IF cap IS NOT NULL THEN
                SELECT p.id INTO found_place FROM runs_budgetplace AS p
                WHERE p.budget_id = b AND p.kind = 0 AND p.place < cap AND p.job_id IS NULL
                  AND NOT EXISTS (
                      SELECT 1 FROM runs_budgetplace AS q
                      WHERE q.budget_id = b AND q.kind = 0 AND q.place >= cap
                        AND q.job_id IS NOT NULL)
                ORDER BY p.place LIMIT 1 FOR UPDATE SKIP LOCKED;
                IF NOT FOUND THEN
                    {_UNPLACED}
                    fits := false;
                    full_ := full_ || b;
                    EXIT;
                END IF;
                flights := flights || found_place;
            END IF;
            -- A shard of the rolling minute records the start (within its share of a cap).
            SELECT p.id INTO found_place FROM runs_budgetplace AS p
            WHERE p.budget_id = b AND p.kind = 1 AND (minute IS NULL OR {_SHARD_HAS_ROOM})
            ORDER BY p.place LIMIT 1 FOR UPDATE SKIP LOCKED;
            IF NOT FOUND THEN
                -- Every shard with room is being taken by other claims: wait for one.
                SELECT p.id INTO found_place FROM runs_budgetplace AS p
                WHERE p.budget_id = b AND p.kind = 1 AND (minute IS NULL OR {_SHARD_HAS_ROOM})
                ORDER BY p.place LIMIT 1 FOR UPDATE;
            END IF;
            IF NOT FOUND THEN
                {_UNPLACED}
                fits := false;
                full_ := full_ || b;
                EXIT;
            END IF;
            minutes := minutes || found_place;
        END LOOP;
        -- What it locked and did not take stays locked until the commit, free: no harm.
        CONTINUE WHEN NOT fits;
        chosen := chosen || job;
        UPDATE runs_budgetplace SET job_id = job, source = candidate->>'source',
            served_at = p_clock + cardinality(chosen) * 1e-6
        WHERE id = ANY(flights);
        UPDATE runs_budgetplace SET
            starts = COALESCE((
                SELECT jsonb_object_agg(second, n) FROM jsonb_each(starts) AS s(second, n)
                WHERE second::bigint >= p_second - {WINDOW} AND second::bigint <> p_second
            ), '{{}}') || jsonb_build_object(p_second::text,
                COALESCE((starts->>(p_second::text))::integer, 0) + 1),
            source = candidate->>'source', served_at = p_clock + cardinality(chosen) * 1e-6
        WHERE id = ANY(minutes);
    END LOOP;
    IF cardinality(chosen) = 0 THEN
        -- Candidates under no full budget, all taken by other claims since read: the caller
        -- reads again.
        IF EXISTS (
            SELECT 1 FROM jsonb_array_elements(p_candidates) AS c
            WHERE NOT (ARRAY(SELECT m::bigint FROM jsonb_array_elements_text(c->'budgets') AS m)
                && full_)
        ) THEN
            RETURN ARRAY[-1];
        END IF;
        RETURN chosen;
    END IF;
    UPDATE runs_job SET status = 'pending', lease_holder_id = p_driver,
        lease_expires_at = p_expires, updated_at = p_now
    WHERE id = ANY(chosen);
    RETURN chosen;
END $$""",
    # A job leaving flight frees the place it held, whoever moves it (a run pushed, a failure,
    # a release, a lease expired, a cancel, a delete), in the same transaction.
    f"""
CREATE OR REPLACE FUNCTION {FREE}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE runs_budgetplace SET job_id = NULL WHERE job_id = OLD.id;
    RETURN NULL;
END $$""",
    f"DROP TRIGGER IF EXISTS {FREE}_update ON runs_job",
    f"""
CREATE TRIGGER {FREE}_update AFTER UPDATE OF status ON runs_job FOR EACH ROW
WHEN (OLD.status IN ({_FLYING}) AND NEW.status NOT IN ({_FLYING}))
EXECUTE FUNCTION {FREE}()""",
    f"DROP TRIGGER IF EXISTS {FREE}_delete ON runs_job",
    f"""
CREATE TRIGGER {FREE}_delete AFTER DELETE ON runs_job FOR EACH ROW
WHEN (OLD.status IN ({_FLYING}))
EXECUTE FUNCTION {FREE}()""",
    # A budget's cap changed, or it was enabled again (jobs leased meanwhile hold no place): its
    # flight places go, and the next claim lays them out afresh from the jobs in flight.
    f"""
CREATE OR REPLACE FUNCTION {RESET}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM runs_budgetplace WHERE budget_id = NEW.id AND kind = 0;
    RETURN NULL;
END $$""",
    f"DROP TRIGGER IF EXISTS {RESET}_update ON runs_providerbudget",
    f"""
CREATE TRIGGER {RESET}_update AFTER UPDATE ON runs_providerbudget FOR EACH ROW
WHEN ((OLD.enabled, OLD.max_in_flight, OLD.backoff_from)
      IS DISTINCT FROM (NEW.enabled, NEW.max_in_flight, NEW.backoff_from))
EXECUTE FUNCTION {RESET}()""",
]

REMOVE = [
    f"DROP FUNCTION IF EXISTS {CANDIDATES}(integer)",
    f"DROP TRIGGER IF EXISTS {RESET}_update ON runs_providerbudget",
    f"DROP FUNCTION IF EXISTS {RESET}()",
    f"DROP TRIGGER IF EXISTS {FREE}_update ON runs_job",
    f"DROP TRIGGER IF EXISTS {FREE}_delete ON runs_job",
    f"DROP FUNCTION IF EXISTS {FREE}()",
    f"DROP FUNCTION IF EXISTS {FUNCTION}(bigint, integer, timestamptz, timestamptz, bigint,"
    " double precision, jsonb, jsonb)",
    f"DROP FUNCTION IF EXISTS {STARTED}(jsonb, bigint)",
]

#: The function migration 0008 installed: it locked the budgets' rows and counted their jobs in
#: flight at every claim, so claims under budgets ran one at a time.
REMOVE_COUNTING = (
    f"DROP FUNCTION IF EXISTS {FUNCTION}(bigint, integer, timestamptz, timestamptz, bigint,"
    " double precision, jsonb, jsonb, jsonb)"
)
