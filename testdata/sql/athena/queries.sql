-- name: partition_dashboard
SELECT "dt", count(*) AS requests
FROM "weblogs"."cloudfront_logs"
WHERE "dt" BETWEEN '2024-06-01' AND '2024-06-07' AND status >= 500
GROUP BY "dt"
-- name: quoted_db_table_alias
SELECT a.account_id, sum(a.cost) FROM "billing"."cur_daily" AS a
WHERE a.line_item_usage_start_date >= from_iso8601_timestamp('2024-05-01T00:00:00Z') AND a.product_code IN ('AmazonS3', 'AmazonEC2')
GROUP BY 1
-- name: prepared_params
SELECT * FROM sales.orders WHERE customer_id = ? AND order_ts > ? LIMIT 100
-- name: execute_using
EXECUTE my_stmt USING 'EU', 42
-- name: partitions_metadata
SELECT * FROM "sales"."orders$partitions" WHERE record_count > 100000
-- name: history_metadata
SELECT * FROM "sales"."orders$history" ORDER BY made_current_at DESC LIMIT 5
-- name: ctas_parquet
CREATE TABLE sales.orders_2024
WITH (table_type = 'ICEBERG', location = 's3://bucket/orders_2024/', is_external = false, partitioning = ARRAY['month(order_ts)'])
AS SELECT * FROM sales.orders WHERE year(order_ts) = 2024
-- name: insert_into_select
INSERT INTO sales.orders_archive SELECT * FROM sales.orders WHERE order_ts < timestamp '2023-01-01 00:00:00'
-- name: unload_statement
UNLOAD (SELECT * FROM sales.orders WHERE region = 'EU') TO 's3://bucket/export/' WITH (format = 'PARQUET')
-- name: optimize_rewrite
OPTIMIZE sales.orders REWRITE DATA USING BIN_PACK WHERE order_ts >= timestamp '2024-01-01 00:00:00'
-- name: vacuum
VACUUM sales.orders
-- name: ddl_backticks
CREATE EXTERNAL TABLE `logs`.`raw_events` (`id` string, `ts` timestamp) PARTITIONED BY (`dt` string) LOCATION 's3://bucket/raw/'
-- name: date_functions
SELECT count(*) FROM analytics.sessions
WHERE date(started_at) = date '2024-03-10' AND date_trunc('hour', started_at) >= timestamp '2024-03-10 08:00:00'
  AND date_diff('day', started_at, current_timestamp) < 30
-- name: json_extract
SELECT count(*) FROM analytics.events
WHERE json_extract_scalar(payload, '$.type') = 'purchase' AND event_date = '2024-02-02'
-- name: approx_and_array
SELECT country, approx_distinct(user_id) FROM analytics.events
WHERE contains(tags, 'beta') AND cardinality(tags) > 2 AND country <> 'ZZ'
GROUP BY country
-- name: join_three_catalog
SELECT o.id, c.name FROM awsdatacatalog.sales.orders o
JOIN awsdatacatalog.crm.customers c ON c.id = o.customer_id
WHERE c.segment = 'enterprise' AND o.total > 1000.50
-- name: with_union_cte
WITH all_clicks AS (
  SELECT user_id, ts, 'web' AS channel FROM raw.web_clicks WHERE ts >= timestamp '2024-01-01 00:00:00'
  UNION ALL
  SELECT user_id, ts, 'app' AS channel FROM raw.app_clicks WHERE ts >= timestamp '2024-01-01 00:00:00'
)
SELECT channel, count(*) FROM all_clicks WHERE user_id = 'u-1' GROUP BY channel
-- name: regexp_like
SELECT * FROM logs.app WHERE regexp_like(message, 'timeout|refused') AND level = 'ERROR'
-- name: show_partitions
SHOW PARTITIONS logs.app
-- name: msck
MSCK REPAIR TABLE logs.app
-- name: struct_field_paths
SELECT w.httprequest.uri, count(*) FROM logs.waf_logs w JOIN logs.blocked_ips b ON b.ip = w.httprequest.clientip
WHERE httprequest.clientip = '1.2.3.4' AND w.httprequest.country IN ('FR', 'DE') GROUP BY 1
