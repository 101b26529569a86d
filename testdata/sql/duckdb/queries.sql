-- name: from_first
FROM lake.main.orders WHERE order_date >= DATE '2024-01-01' AND amount > 10
-- name: from_first_select
FROM lake.main.orders o SELECT o.region, count(*) WHERE o.status = 'paid' GROUP BY ALL
-- name: read_parquet_function
SELECT count(*) FROM read_parquet('s3://bucket/events/*.parquet') WHERE event_type = 'click'
-- name: iceberg_scan_function
SELECT * FROM iceberg_scan('s3://warehouse/db/orders', allow_moved_paths = true) WHERE id = 3
-- name: file_path_as_table
SELECT * FROM 'data/orders.parquet' WHERE amount > 5
-- name: attached_iceberg_catalog
SELECT customer_id, sum(amount) FROM ice.sales.orders WHERE order_date BETWEEN '2024-02-01'::DATE AND '2024-02-10'::DATE GROUP BY 1
-- name: double_colon_casts
SELECT * FROM lake.main.events WHERE ts::DATE = '2024-03-03' AND payload->>'kind' = 'x' AND id::VARCHAR LIKE '12%'
-- name: positional_params
SELECT * FROM lake.main.orders WHERE customer_id = $1 AND order_date >= $2
-- name: list_literal_and_in
SELECT * FROM lake.main.orders WHERE region IN ('EU', 'US') AND list_contains(['a', 'b'], status)
-- name: escape_string
SELECT * FROM lake.main.logs WHERE msg = E'line\nbreak' AND lvl = 'it''s'
-- name: interval_variants
SELECT * FROM lake.main.events
WHERE ts > TIMESTAMP '2024-06-01 12:00:00' - INTERVAL 2 HOUR AND ts < now() - INTERVAL '1 day' AND d >= DATE '2024-06-01' + INTERVAL '7 days'
-- name: union_by_name
SELECT * FROM lake.main.a WHERE x = 1 UNION ALL BY NAME SELECT * FROM lake.main.b WHERE y = 2
-- name: cte_materialized
WITH t AS MATERIALIZED (SELECT * FROM lake.main.orders WHERE status = 'paid') SELECT * FROM t WHERE amount > 100
-- name: asof_join
SELECT t.*, p.price FROM lake.main.trades t ASOF JOIN lake.main.prices p ON t.symbol = p.symbol AND t.ts >= p.ts
WHERE t.symbol IN ('AAPL', 'MSFT')
-- name: qualify_window
SELECT * FROM lake.main.orders WHERE region = 'EU' QUALIFY row_number() OVER (PARTITION BY customer_id ORDER BY order_date DESC) = 1
-- name: using_sample
SELECT * FROM lake.main.orders USING SAMPLE 10% WHERE amount > 1
-- name: struct_and_list_access
SELECT * FROM lake.main.events WHERE props.device = 'ios' AND tags[1] = 'a'
-- name: copy_to
COPY (SELECT * FROM lake.main.orders WHERE region = 'EU') TO 'out.parquet' (FORMAT PARQUET)
-- name: attach_and_pragma
ATTACH 'iceberg_catalog' AS ice (TYPE ICEBERG)
-- name: create_view
CREATE OR REPLACE VIEW lake.main.paid_orders AS SELECT * FROM lake.main.orders WHERE status = 'paid'
-- name: insert_by_name
INSERT INTO lake.main.orders_copy BY NAME SELECT * FROM lake.main.orders WHERE order_date > '2024-01-01'
-- name: multiple_statements
SET threads = 4; SELECT * FROM lake.main.orders WHERE id = 1; SELECT * FROM lake.main.customers WHERE name = 'x';
-- name: generate_series_join
SELECT g.d, count(o.id) FROM generate_series(DATE '2024-01-01', DATE '2024-01-31', INTERVAL 1 DAY) g(d)
LEFT JOIN lake.main.orders o ON o.order_date = g.d AND o.status = 'paid'
GROUP BY g.d
-- name: ilike_and_regexp_matches
SELECT * FROM lake.main.users WHERE email ILIKE '%@corp.com' AND regexp_matches(name, '^[A-Z]') AND age >= 18
-- name: summarize
SUMMARIZE lake.main.orders
-- name: lambda_and_list_filter
SELECT * FROM lake.main.events WHERE len(list_filter(tags, x -> x LIKE 'a%')) > 0 AND day = '2024-05-05'
-- name: huge_unbalanced_parens
SELECT * FROM lake.main.orders WHERE ((((amount > 5)) AND (region = 'EU')
-- name: lateral_alias_in_where
SELECT lower(email) AS e, amount * 2 AS double_amount FROM lake.main.users WHERE e LIKE '%@x.com' AND double_amount > 10
-- name: struct_field_paths
SELECT meta.os, count(*) FROM app.events
WHERE meta.os = 'ios' AND events.meta.version >= '17' AND meta['device'] = 'phone' AND struct_extract(meta, 'locale') = 'fr_FR'
GROUP BY ALL
