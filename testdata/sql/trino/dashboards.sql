-- name: events_last_7_days
SELECT event_type, count(*) AS n
FROM iceberg.analytics.events
WHERE event_date >= current_date - INTERVAL '7' DAY
  AND tenant_id = 42
GROUP BY event_type
-- name: revenue_by_day_date_trunc
SELECT date_trunc('day', o.created_at) AS day, sum(o.amount)
FROM iceberg.sales.orders AS o
WHERE date_trunc('day', o.created_at) BETWEEN TIMESTAMP '2024-03-01 00:00:00' AND TIMESTAMP '2024-03-31 00:00:00'
  AND o.status IN ('paid', 'shipped')
GROUP BY 1
ORDER BY 1
-- name: quoted_identifiers
SELECT "User Id", count(*)
FROM "iceberg"."web"."page_views" pv
WHERE pv."country" = 'DE' AND pv."User Id" IS NOT NULL AND "ts" >= TIMESTAMP '2024-05-01 00:00:00 UTC'
GROUP BY 1
-- name: lower_and_like
SELECT *
FROM iceberg.crm.accounts
WHERE lower(email) LIKE '%@example.com' AND upper(country_code) = 'US' AND name NOT LIKE 'test%'
-- name: reversed_and_cast
SELECT count(*)
FROM iceberg.sales.orders
WHERE 100 <= amount AND '2024-01-01' < CAST(created_at AS varchar) AND CAST(created_at AS date) = DATE '2024-02-29'
-- name: year_month_hour
SELECT count(*)
FROM iceberg.logs.requests r
WHERE year(r.ts) = 2024 AND month(r.ts) IN (1, 2, 3) AND hour(r.ts) BETWEEN 9 AND 17
  AND extract(day FROM r.ts) = 15 AND day_of_week(r.ts) NOT IN (6, 7)
-- name: or_not_tree
SELECT id
FROM iceberg.app.tickets t
WHERE (t.priority = 'high' OR (t.priority = 'medium' AND t.age_days > 30))
  AND NOT (t.state = 'closed' OR t.state = 'merged')
-- name: join_using_and_left_join
SELECT u.name, count(s.id)
FROM iceberg.app.users u
JOIN iceberg.app.memberships m USING (user_id)
LEFT JOIN iceberg.app.sessions s ON s.user_id = u.user_id AND s.started_at >= TIMESTAMP '2024-06-01 00:00:00'
WHERE u.signup_date >= DATE '2023-01-01' AND m.plan <> 'free' AND s.device IS NULL
GROUP BY u.name
-- name: cross_join_unnest
SELECT e.id, tag
FROM iceberg.analytics.events e
CROSS JOIN UNNEST(e.tags) AS t(tag)
WHERE tag = 'promo' AND e.event_date = DATE '2024-04-01'
-- name: union_all_branches
SELECT id, ts FROM iceberg.raw.clicks_2023 WHERE ts >= TIMESTAMP '2023-12-01 00:00:00'
UNION ALL
SELECT id, ts FROM iceberg.raw.clicks_2024 WHERE ts < TIMESTAMP '2024-01-15 00:00:00' AND source = 'ios'
-- name: derived_table_pushdown
SELECT x.customer_id, x.total
FROM (SELECT customer_id, region, sum(amount) AS total FROM iceberg.sales.orders WHERE status = 'paid' GROUP BY customer_id, region) x
WHERE x.region = 'EMEA' AND x.total > 1000
-- name: nested_ctes
WITH base AS (
  SELECT * FROM iceberg.sales.orders WHERE order_date >= DATE '2024-01-01'
), eu AS (
  SELECT b.order_id, b.country, b.amount FROM base b WHERE b.country IN ('DE', 'FR', 'IT')
)
SELECT country, sum(amount) FROM eu WHERE amount > 10 GROUP BY country
-- name: cte_referenced_twice
WITH daily AS (
  SELECT order_date, count(*) AS n FROM iceberg.sales.orders WHERE region = 'US' GROUP BY order_date
)
SELECT a.order_date, a.n, b.n
FROM daily a JOIN daily b ON b.order_date = a.order_date - INTERVAL '7' DAY
WHERE a.order_date >= DATE '2024-01-01'
-- name: correlated_subquery
SELECT o.id
FROM iceberg.sales.orders o
WHERE o.amount > (SELECT avg(i.amount) FROM iceberg.sales.orders i WHERE i.customer_id = o.customer_id AND i.status = 'paid')
  AND o.status = 'paid'
-- name: in_subquery_with_filter
SELECT *
FROM iceberg.sales.orders
WHERE customer_id IN (SELECT id FROM iceberg.crm.customers WHERE tier = 'gold' AND country = 'NL')
  AND order_date BETWEEN DATE '2024-01-01' AND DATE '2024-03-31'
-- name: parameterized
SELECT * FROM iceberg.sales.orders WHERE tenant_id = ? AND order_date >= ? AND status IN (?, ?)
-- name: execute_immediate_style_explain
EXPLAIN ANALYZE SELECT count(*) FROM iceberg.sales.orders WHERE order_date = DATE '2024-07-04'
-- name: coalesce_and_is_distinct
SELECT * FROM iceberg.sales.orders
WHERE coalesce(discount_code, 'none') = 'none' AND region IS NOT DISTINCT FROM 'EU' AND NOT is_test
-- name: time_travel
SELECT count(*) FROM iceberg.sales.orders FOR VERSION AS OF 8954597067493422955 o WHERE o.region = 'EU'
-- name: time_travel_timestamp
SELECT count(*) FROM iceberg.sales.orders FOR TIMESTAMP AS OF TIMESTAMP '2024-01-01 00:00:00 UTC' WHERE amount > 0
-- name: tablesample
SELECT avg(amount) FROM iceberg.sales.orders TABLESAMPLE BERNOULLI (5) WHERE order_date > DATE '2024-01-01'
-- name: window_qualify_like
SELECT * FROM (
  SELECT user_id, ts, row_number() OVER (PARTITION BY user_id ORDER BY ts DESC) AS rn
  FROM iceberg.app.logins WHERE ts > TIMESTAMP '2024-01-01 00:00:00'
) t WHERE rn = 1
-- name: large_in_list_numbers
SELECT * FROM iceberg.sales.orders WHERE customer_id IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12) AND amount BETWEEN -5 AND 1e3
-- name: negated_between_and_not_in
SELECT * FROM iceberg.sales.orders WHERE amount NOT BETWEEN 10 AND 20 AND region NOT IN ('APAC') AND note IS NULL
