-- name: insert_select
INSERT INTO iceberg.mart.daily_revenue
SELECT order_date, sum(amount) FROM iceberg.sales.orders WHERE order_date = DATE '2024-05-01' GROUP BY 1
-- name: insert_with_cte
INSERT INTO iceberg.mart.top_customers (customer_id, total)
WITH t AS (SELECT customer_id, sum(amount) AS total FROM iceberg.sales.orders WHERE order_date >= DATE '2024-01-01' GROUP BY 1)
SELECT customer_id, total FROM t WHERE total > 10000
-- name: ctas
CREATE TABLE IF NOT EXISTS iceberg.mart.eu_orders
WITH (format = 'PARQUET', partitioning = ARRAY['day(order_ts)'])
AS SELECT * FROM iceberg.sales.orders WHERE region = 'EU'
-- name: merge_into
MERGE INTO iceberg.sales.orders t
USING iceberg.staging.orders_delta s
ON t.order_id = s.order_id AND t.order_date >= DATE '2024-05-01'
WHEN MATCHED AND s.op = 'D' THEN DELETE
WHEN MATCHED THEN UPDATE SET amount = s.amount, status = s.status
WHEN NOT MATCHED THEN INSERT (order_id, order_date, amount, status) VALUES (s.order_id, s.order_date, s.amount, s.status)
-- name: delete_where
DELETE FROM iceberg.sales.orders WHERE order_date < DATE '2020-01-01' AND status = 'cancelled'
-- name: update_where
UPDATE iceberg.sales.orders SET status = 'archived' WHERE order_date < DATE '2021-01-01'
-- name: snapshots_metadata
SELECT snapshot_id, committed_at, operation FROM iceberg.sales."orders$snapshots" WHERE committed_at > TIMESTAMP '2024-06-01 00:00:00 UTC' ORDER BY committed_at DESC
-- name: files_metadata
SELECT partition, count(*) AS files, sum(file_size_in_bytes) FROM iceberg.sales."orders$files" WHERE record_count < 1000 GROUP BY partition
-- name: alter_execute_optimize
ALTER TABLE iceberg.sales.orders EXECUTE optimize(file_size_threshold => '128MB') WHERE order_date >= DATE '2024-01-01'
-- name: use_and_set
USE iceberg.sales
-- name: set_session
SET SESSION iceberg.compression_codec = 'ZSTD'
-- name: show_tables
SHOW TABLES FROM iceberg.sales
-- name: drop_table
DROP TABLE IF EXISTS iceberg.tmp.scratch
-- name: describe
DESCRIBE iceberg.sales.orders
-- name: prepare_statement
PREPARE my_select FROM SELECT * FROM iceberg.sales.orders WHERE tenant_id = ? AND region = 'EU'
-- name: execute_immediate_using
EXECUTE IMMEDIATE 'SELECT * FROM iceberg.sales.orders o WHERE o.region = ''EU'' AND o.order_date >= ?' USING DATE '2024-01-01'
