-- Gaps and islands over checkin_days (one row per user and local date): consecutive dates share
-- day - row_number(); each island is a run of days. Longest = the longest island; current = the
-- island ending on the user's local today or yesterday as of :now, else 0. Every user, also those
-- without check-ins (0, 0).
WITH islands AS (
    SELECT user_id, max(day) AS last_day, count(*) AS len
    FROM (
        SELECT user_id, day, day - (row_number() OVER (PARTITION BY user_id ORDER BY day))::int AS grp
        FROM checkin_days
    ) d
    GROUP BY user_id, grp
), per_user AS (
    SELECT u.user_id,
           coalesce(sum(i.len), 0) AS days,
           coalesce(max(i.len), 0) AS longest,
           coalesce(max(i.len) FILTER (WHERE i.last_day BETWEEN (:'now'::timestamptz AT TIME ZONE u.tz)::date - 1
                                                            AND (:'now'::timestamptz AT TIME ZONE u.tz)::date), 0) AS current
    FROM users u LEFT JOIN islands i ON i.user_id = u.user_id
    GROUP BY u.user_id
)
SELECT sum(days) AS checkin_days, count(*) AS users, sum(current) AS current_sum, sum(longest) AS longest_sum
FROM per_user;
