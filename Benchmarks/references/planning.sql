-- Every user's next remind_at instant strictly after :now in the user's zone, and the due set of
-- the quarter [:q0, :q1). Local date of now, plus remind_at, back to an instant: AT TIME ZONE
-- (PostgreSQL: a wall time in a gap moves forward by the gap, one in a fold takes the LATER
-- occurrence; streakd takes the earlier one).
SELECT count(*) AS users,
       count(*) FILTER (WHERE nxt >= :'q0'::timestamptz AND nxt < :'q1'::timestamptz) AS due,
       sum(extract(epoch FROM nxt)::bigint) AS checksum
FROM (
    SELECT CASE WHEN t > :'now'::timestamptz THEN t
                ELSE (((:'now'::timestamptz AT TIME ZONE tz)::date + 1) + remind_at) AT TIME ZONE tz
           END AS nxt
    FROM (
        SELECT tz, remind_at, ((:'now'::timestamptz AT TIME ZONE tz)::date + remind_at) AT TIME ZONE tz AS t
        FROM users
    ) s
) n;
