-- name: qualify_dedupe
SELECT * FROM ANALYTICS.PUBLIC.EVENTS
WHERE EVENT_DATE >= '2024-01-01'::DATE AND TENANT_ID = 7
QUALIFY ROW_NUMBER() OVER (PARTITION BY EVENT_ID ORDER BY LOADED_AT DESC) = 1
-- name: ilike_and_iff
SELECT IFF(AMOUNT > 100, 'big', 'small') AS SIZE, COUNT(*) FROM SALES.CORE.ORDERS O
WHERE O.CUSTOMER_NAME ILIKE '%acme%' AND O.REGION NOT ILIKE 'test%' GROUP BY 1
-- name: variant_path_cast
SELECT RAW:user.id::STRING AS USER_ID FROM RAW.EVENTS.CLICKSTREAM
WHERE RAW:event_type::STRING = 'purchase' AND INGESTED_AT > DATEADD(day, -1, CURRENT_TIMESTAMP())
-- name: lateral_flatten
SELECT c.ID, f.value::STRING AS TAG FROM CRM.PUBLIC.CONTACTS c, LATERAL FLATTEN(input => c.TAGS) f
WHERE c.COUNTRY = 'DE' AND f.value::STRING = 'vip'
-- name: time_travel_at
SELECT COUNT(*) FROM SALES.CORE.ORDERS AT(TIMESTAMP => '2024-06-01 00:00:00'::TIMESTAMP_LTZ) WHERE STATUS = 'open'
-- name: time_travel_before
SELECT * FROM SALES.CORE.ORDERS BEFORE(STATEMENT => '01a2b3c4-0000-1111-0000-000000000001') WHERE ID = 10
-- name: dollar_quoted_string
SELECT * FROM DOCS.PUBLIC.PAGES WHERE BODY LIKE $$%it's done%$$ AND LANG = 'en'
-- name: slash_comment_and_backslash_string
SELECT * FROM DOCS.PUBLIC.PAGES // line comment in Snowflake
WHERE PATH = 'C:\\temp\\x' AND TITLE = 'it\'s'
-- name: date_trunc_unquoted_unit
SELECT DATE_TRUNC(MONTH, ORDER_TS) AS M, SUM(AMOUNT) FROM SALES.CORE.ORDERS
WHERE DATE_TRUNC(MONTH, ORDER_TS) >= '2024-01-01' AND YEAR(ORDER_TS) = 2024 GROUP BY 1
-- name: to_date_literal_and_column
SELECT * FROM SALES.CORE.ORDERS WHERE TO_DATE(ORDER_TS) = TO_DATE('2024-03-01') AND ORDER_DAY < TO_DATE('2024-04-01')
-- name: bind_variables
SELECT * FROM SALES.CORE.ORDERS WHERE CUSTOMER_ID = :1 AND REGION = :region AND STATUS IN (?, ?)
-- name: merge_snowflake
MERGE INTO SALES.CORE.ORDERS T USING SALES.STAGE.ORDERS_NEW S
ON T.ORDER_ID = S.ORDER_ID AND T.ORDER_DATE >= DATEADD(day, -3, CURRENT_DATE())
WHEN MATCHED THEN UPDATE SET T.AMOUNT = S.AMOUNT
WHEN NOT MATCHED THEN INSERT (ORDER_ID, ORDER_DATE, AMOUNT) VALUES (S.ORDER_ID, S.ORDER_DATE, S.AMOUNT)
-- name: insert_overwrite_into
INSERT OVERWRITE INTO MART.PUBLIC.DAILY SELECT ORDER_DATE, SUM(AMOUNT) FROM SALES.CORE.ORDERS WHERE ORDER_DATE = CURRENT_DATE - 1 GROUP BY 1
-- name: ctas_or_replace_transient
CREATE OR REPLACE TRANSIENT TABLE MART.PUBLIC.BIG_ORDERS AS SELECT * FROM SALES.CORE.ORDERS WHERE AMOUNT > 10000
-- name: update_from
UPDATE SALES.CORE.ORDERS O SET STATUS = 'vip' FROM CRM.PUBLIC.CUSTOMERS C
WHERE O.CUSTOMER_ID = C.ID AND C.TIER = 'gold' AND O.STATUS = 'open'
-- name: delete_using
DELETE FROM SALES.CORE.ORDERS USING SALES.STAGE.DELETED D WHERE ORDERS.ORDER_ID = D.ORDER_ID AND D.DELETED_AT > '2024-06-01'
-- name: table_function_result_scan
SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID())) WHERE "status" = 'ok'
-- name: stage_query
SELECT $1, $2 FROM @MY_STAGE/data/ (FILE_FORMAT => 'CSV') WHERE $1 = 'x'
-- name: sample_and_top
SELECT TOP 10 * FROM SALES.CORE.ORDERS SAMPLE (10) WHERE REGION = 'EU'
-- name: quoted_mixed_case
SELECT "userId" FROM "Analytics"."Public"."PageViews" WHERE "pageType" = 'home' AND "ts"::DATE = '2024-02-01'
-- name: exclude_and_group_by_all
SELECT * EXCLUDE (PII) FROM CRM.PUBLIC.CONTACTS WHERE CREATED_AT BETWEEN '2024-01-01' AND '2024-12-31'
-- name: use_warehouse
USE WAREHOUSE ANALYTICS_WH
-- name: alter_session
ALTER SESSION SET TIMEZONE = 'UTC'
-- name: show_grants
SHOW GRANTS TO ROLE ANALYST
-- name: dbt_incremental_model
{{ config(materialized='incremental', unique_key='order_id') }}
SELECT o.order_id, o.order_date, o.amount
FROM {{ ref('stg_orders') }} o
JOIN {{ source('crm', 'customers') }} c ON c.id = o.customer_id
WHERE o.status = 'complete' AND c.country = '{{ var("country") }}'
{% if is_incremental() %}
  AND o.order_date > (SELECT max(order_date) FROM {{ this }})
{% endif %}
-- name: dbt_jinja_values
SELECT * FROM {{ ref('fct_sessions') }} WHERE session_date >= {{ var('start_date') }} AND channel IN ({{ channels }})
-- name: truncated_query_text
SELECT o.ID, o.AMOUNT FROM SALES.CORE.ORDERS o WHERE o.REGION = 'EU' AND o.ORDER_DATE >= '2024-01-01' AND o.CUSTOMER_ID IN (1, 2, 3, 4
-- name: truncated_in_string
SELECT * FROM SALES.CORE.ORDERS WHERE STATUS = 'open' AND NOTE LIKE 'abc
-- name: lateral_alias_in_where
SELECT DATE_TRUNC('day', EVENT_TS) AS DAY, COUNT(*) AS N FROM ANALYTICS.PUBLIC.EVENTS
WHERE DAY >= '2024-05-01' AND N > 0 AND TENANT = 'a' GROUP BY 1
-- name: like_any_all
SELECT * FROM WEB.PUBLIC.REQUESTS
WHERE URL LIKE ANY ('%/checkout%', '%/cart%') AND HOST ILIKE ALL ('%.example.com', 'www.%') AND PATH NOT LIKE ANY ('/health%')
-- name: session_variables
SELECT * FROM SALES.CORE.ORDERS
WHERE ORDER_TS >= $start_ts AND ORDER_TS < $end_ts AND REGION = $region
-- name: flatten_keeps_base_predicates
SELECT e.ID, f.value:sku::STRING AS SKU FROM RAW.EVENTS.ORDERS_JSON e, LATERAL FLATTEN(input => e.PAYLOAD:items, outer => TRUE) f
WHERE e.EVENT_DATE = '2024-05-01'::DATE AND e.TENANT_ID = 7 AND f.value:qty::INT > 1
