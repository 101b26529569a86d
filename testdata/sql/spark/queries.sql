-- name: tpcds_q3_style
SELECT dt.d_year, item.i_brand_id brand_id, item.i_brand brand, SUM(ss_ext_sales_price) sum_agg
FROM date_dim dt, store_sales, item
WHERE dt.d_date_sk = store_sales.ss_sold_date_sk AND store_sales.ss_item_sk = item.i_item_sk
  AND item.i_manufact_id = 128 AND dt.d_moy = 11
GROUP BY dt.d_year, item.i_brand, item.i_brand_id
ORDER BY dt.d_year, sum_agg DESC, brand_id
LIMIT 100
-- name: tpcds_q7_style
SELECT i_item_id, avg(ss_quantity) agg1
FROM store_sales ss
JOIN customer_demographics cd ON ss.ss_cdemo_sk = cd.cd_demo_sk
JOIN date_dim d ON ss.ss_sold_date_sk = d.d_date_sk
JOIN item i ON ss.ss_item_sk = i.i_item_sk
JOIN promotion p ON ss.ss_promo_sk = p.p_promo_sk
WHERE cd.cd_gender = 'M' AND cd.cd_marital_status = 'S' AND cd.cd_education_status = 'College'
  AND (p.p_channel_email = 'N' OR p.p_channel_event = 'N') AND d.d_year = 2000
GROUP BY i_item_id
-- name: tpcds_q19_style
SELECT i_brand_id, i_brand, i_manufact_id, sum(ss_ext_sales_price) ext_price
FROM spark_catalog.tpcds.date_dim, spark_catalog.tpcds.store_sales, spark_catalog.tpcds.item
WHERE d_date_sk = ss_sold_date_sk AND ss_item_sk = i_item_sk AND i_manager_id = 8 AND d_moy = 11 AND d_year = 1998
GROUP BY i_brand, i_brand_id, i_manufact_id
-- name: tpcds_q42_derived
SELECT sub.d_year, sub.i_category, sub.total
FROM (
  SELECT dt.d_year, it.i_category, sum(ss.ss_ext_sales_price) total
  FROM tpcds.date_dim dt JOIN tpcds.store_sales ss ON dt.d_date_sk = ss.ss_sold_date_sk
  JOIN tpcds.item it ON ss.ss_item_sk = it.i_item_sk
  WHERE it.i_manager_id = 1 AND dt.d_moy = 11
  GROUP BY dt.d_year, it.i_category
) sub
WHERE sub.d_year = 2000
-- name: tpcds_q96_style
SELECT count(*) FROM store_sales ss, household_demographics hd, time_dim t, store s
WHERE ss.ss_sold_time_sk = t.t_time_sk AND ss.ss_hdemo_sk = hd.hd_demo_sk AND ss.ss_store_sk = s.s_store_sk
  AND t.t_hour = 20 AND t.t_minute >= 30 AND hd.hd_dep_count = 7 AND s.s_store_name = 'ese'
-- name: backticks_and_double_quoted_string
SELECT `user id`, count(*) FROM `prod`.`events` WHERE `event type` = "click" AND dt = '2024-01-01' GROUP BY `user id`
-- name: metadata_snapshots
SELECT committed_at, snapshot_id, operation FROM prod.db.orders.snapshots WHERE operation = 'overwrite'
-- name: metadata_files_4part
SELECT file_path, record_count FROM spark_catalog.prod.db.orders.files WHERE record_count < 1000
-- name: time_travel_version
SELECT * FROM prod.db.orders VERSION AS OF 10963874102873 WHERE region = 'EU'
-- name: time_travel_timestamp
SELECT count(*) FROM prod.db.orders TIMESTAMP AS OF '2024-01-01 00:00:00' o WHERE o.amount > 10L
-- name: lateral_view_explode
SELECT e.user_id, item FROM prod.db.events e LATERAL VIEW explode(e.items) t AS item
WHERE item = 'sku-1' AND e.dt >= '2024-06-01'
-- name: insert_overwrite_partition
INSERT OVERWRITE TABLE prod.db.daily PARTITION (dt = '2024-06-01')
SELECT user_id, count(*) FROM prod.db.events WHERE dt = '2024-06-01' GROUP BY user_id
-- name: merge_into_delta
MERGE INTO prod.db.customers AS t
USING (SELECT * FROM prod.staging.customers_cdc WHERE op_ts > '2024-06-01') AS s
ON t.id = s.id
WHEN MATCHED AND s.op = 'D' THEN DELETE
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *
-- name: ctas_using_iceberg
CREATE TABLE prod.db.orders_eu USING iceberg PARTITIONED BY (days(ts)) AS
SELECT * FROM prod.db.orders WHERE region = 'EU' AND ts >= '2024-01-01'
-- name: call_procedure
CALL prod.system.rewrite_data_files(table => 'db.orders', strategy => 'sort', sort_order => 'zorder(a,b)')
-- name: rlike_and_regexp
SELECT * FROM logs.app WHERE message RLIKE 'time.?out' AND host REGEXP '^web-[0-9]+' AND level != 'DEBUG'
-- name: null_safe_equal_and_double_eq
SELECT * FROM prod.db.orders WHERE coupon <=> NULL OR region == 'EU'
-- name: to_date_and_date_format
SELECT count(*) FROM prod.db.events
WHERE to_date(event_ts) = '2024-06-01' AND date_format(event_ts, 'yyyy-MM') = '2024-06' AND trunc(event_ts, 'MM') = '2024-06-01'
-- name: cast_literal_and_interval
SELECT * FROM prod.db.events WHERE event_ts > cast('2024-06-01' AS timestamp) - INTERVAL 1 DAY AND ds >= date'2024-05-01'
-- name: cache_and_refresh
REFRESH TABLE prod.db.events
-- name: with_recursive_like
WITH RECURSIVE chain (id, parent_id) AS (
  SELECT id, parent_id FROM prod.db.nodes WHERE parent_id IS NULL
  UNION ALL
  SELECT n.id, n.parent_id FROM prod.db.nodes n JOIN chain c ON n.parent_id = c.id
)
SELECT * FROM chain WHERE id > 5
-- name: semi_anti_join
SELECT * FROM prod.db.orders o LEFT SEMI JOIN prod.db.vip v ON o.customer_id = v.id AND v.level = 'gold'
LEFT ANTI JOIN prod.db.blocked b ON b.id = o.customer_id
WHERE o.ts > '2024-01-01'
-- name: hint_comment_and_nested_comment
SELECT /*+ BROADCAST(d) */ f.id FROM prod.db.facts f JOIN prod.db.dims d ON f.dim_id = d.id /* outer /* nested */ still comment */
WHERE d.kind = 'a' -- trailing comment
-- name: numeric_suffixes
SELECT * FROM prod.db.metrics WHERE value > 1.5D AND cnt < 100L AND ratio BETWEEN 0.1BD AND 0.9BD
-- name: struct_field_filter
SELECT * FROM prod.db.events e WHERE e.device.os = 'ios' AND e.geo.country.code IN ('US', 'CA')
-- name: group_by_having_on_grouping_column
SELECT region, count(*) FROM prod.db.orders GROUP BY region HAVING region <> 'test' AND count(*) > 10
-- name: distribute_sort_by
SELECT * FROM prod.db.orders WHERE amount > 0 DISTRIBUTE BY region SORT BY ts
-- name: delete_from
DELETE FROM prod.db.orders WHERE ts < '2020-01-01' AND status IN ('cancelled', 'void')
-- name: update_set
UPDATE prod.db.orders SET status = 'late' WHERE status = 'open' AND due_date < current_date()
-- name: explain_extended
EXPLAIN EXTENDED SELECT * FROM prod.db.orders WHERE id = 7
-- name: cache_table_as_select
CACHE LAZY TABLE hot_orders OPTIONS ('storageLevel' 'MEMORY_AND_DISK') AS
SELECT * FROM sales.orders WHERE order_date >= DATE '2024-04-01' AND region = 'EU'
-- name: lateral_view_outer_posexplode
SELECT o.order_id, item FROM sales.orders o LATERAL VIEW OUTER explode(o.items) t AS item
LATERAL VIEW posexplode(o.tags) p AS pos, tag
WHERE o.order_date = '2024-05-01' AND region = 'EU' AND item = 'sku-1'
