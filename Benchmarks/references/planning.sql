-- Every user's next remind_at instant strictly after :now in the user's zone, and the due set of
-- the quarter [:q0, :q1). The local date of now, plus remind_at, back to an instant with AT TIME
-- ZONE; if that is not after now, the same for the next local date. (PostgreSQL: a wall time in a
-- gap moves forward by the gap, as in streakd; one in a fold takes the LATER occurrence, streakd
-- the earlier one.) evaluate_once(x) returns x; being VOLATILE it stops the planner from pulling
-- the subqueries up, which would paste each expression into every place its column is used
-- (nxt 3 times, t twice): each value is computed once per user, in the parallel workers.
SELECT count(*) AS users,
       count(*) FILTER (WHERE nxt >= :'q0'::timestamptz AND nxt < :'q1'::timestamptz) AS due,
       sum(extract(epoch FROM nxt)::bigint) AS checksum
FROM (
    SELECT evaluate_once(CASE WHEN t > :'now'::timestamptz THEN t
                              ELSE ((d + 1) + remind_at) AT TIME ZONE tz END) AS nxt
    FROM (
        SELECT tz, remind_at, d, evaluate_once((d + remind_at) AT TIME ZONE tz) AS t
        FROM (
            SELECT tz, remind_at, evaluate_once((:'now'::timestamptz AT TIME ZONE tz)::date) AS d
            FROM users
        ) today
    ) candidate
) next_remind;
