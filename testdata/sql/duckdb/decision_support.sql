-- Decision-support statements in DuckDB SQL, written for floe in the style
-- of TPC-DS and TPC-H: comma FROM lists with unqualified columns, CTE
-- chains, UNION ALL channels and correlated subqueries. Each "-- want:"
-- line is a (table, column, op) a reader of the SQL attributes; "join" is
-- one side of an equi-join. Tables are in ../decision_support_ddl.sql.

-- name: ds_star_brand
-- want: store_sales ss_sold_date_sk join
-- want: date_dim d_date_sk join
-- want: store_sales ss_item_sk join
-- want: item i_item_sk join
-- want: store_sales ss_store_sk join
-- want: store s_store_sk join
-- want: date_dim d_year =
-- want: date_dim d_moy =
-- want: item i_manufact_id in
-- want: store s_state in
-- want: item i_current_price between
SELECT i_brand_id, i_brand, s_store_name, sum(ss_ext_sales_price) ext_price
FROM store_sales, date_dim, item, store
WHERE ss_sold_date_sk = d_date_sk
  AND ss_item_sk = i_item_sk
  AND ss_store_sk = s_store_sk
  AND d_year = 2001
  AND d_moy = 11
  AND i_manufact_id IN (128, 129, 130)
  AND s_state IN ('TN', 'GA')
  AND i_current_price BETWEEN 20.00::DECIMAL(7,2) AND 50.00::DECIMAL(7,2)
GROUP BY i_brand_id, i_brand, s_store_name
ORDER BY ext_price DESC
LIMIT 100

-- name: ds_cte_year_total
-- want: store_sales ss_sold_date_sk join
-- want: date_dim d_date_sk join
-- want: web_sales ws_sold_date_sk join
-- want: store_sales ss_customer_sk join
-- want: customer c_customer_sk join
-- want: web_sales ws_bill_customer_sk join
-- want: date_dim d_year =
-- want: customer c_preferred_cust_flag =
WITH ss AS (
  SELECT ss_customer_sk customer_sk, d_year dyear, sum(ss_net_profit) profit
  FROM store_sales, date_dim
  WHERE ss_sold_date_sk = d_date_sk
  GROUP BY ss_customer_sk, d_year),
ws AS (
  SELECT ws_bill_customer_sk AS customer_sk, d_year AS dyear, sum(ws_net_paid) AS paid
  FROM web_sales, date_dim
  WHERE ws_sold_date_sk = d_date_sk
  GROUP BY ws_bill_customer_sk, d_year)
SELECT c_customer_id, c_first_name, c_last_name
FROM ss s1, ss s2, ws w1, customer
WHERE s1.customer_sk = c_customer_sk
  AND s2.customer_sk = c_customer_sk
  AND w1.customer_sk = c_customer_sk
  AND s1.dyear = 2001
  AND s2.dyear = 2002
  AND w1.dyear = 2001
  AND s1.profit > 0
  AND c_preferred_cust_flag = 'Y'
ORDER BY c_customer_id

-- name: ds_union_channels
-- want: store_sales ss_customer_sk is null
-- want: web_sales ws_bill_customer_sk is null
-- want: catalog_sales cs_bill_customer_sk is null
-- want: store_sales ss_item_sk join
-- want: web_sales ws_item_sk join
-- want: catalog_sales cs_item_sk join
-- want: item i_item_sk join
-- want: store_sales ss_sold_date_sk join
-- want: web_sales ws_sold_date_sk join
-- want: catalog_sales cs_sold_date_sk join
-- want: date_dim d_date_sk join
-- want: date_dim d_qoy =
-- want: date_dim d_year =
-- want: item i_category in
SELECT channel, i_category, sum(price) sales
FROM (
  SELECT 'store' channel, ss_item_sk item_sk, ss_sold_date_sk date_sk, ss_ext_sales_price price
  FROM store_sales WHERE ss_customer_sk IS NULL
  UNION ALL
  SELECT 'web', ws_item_sk, ws_sold_date_sk, ws_ext_sales_price
  FROM web_sales WHERE ws_bill_customer_sk IS NULL
  UNION ALL
  SELECT 'catalog', cs_item_sk, cs_sold_date_sk, cs_ext_sales_price
  FROM catalog_sales WHERE cs_bill_customer_sk IS NULL
) channels, item, date_dim
WHERE item_sk = i_item_sk
  AND date_sk = d_date_sk
  AND d_qoy = 2
  AND d_year = 2000
  AND i_category IN ('Books', 'Music')
GROUP BY channel, i_category
ORDER BY channel, i_category

-- name: ds_exists_priority
-- want: orders o_orderdate >=
-- want: orders o_orderdate <
-- want: lineitem l_orderkey join
-- want: orders o_orderkey join
SELECT o_orderpriority, count(*) AS order_count
FROM orders
WHERE o_orderdate >= date '1995-01-01'
  AND o_orderdate < DATE '1995-01-01' + INTERVAL 3 MONTH
  AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority
ORDER BY o_orderpriority

-- name: ds_exists_customers
-- want: customer c_current_addr_sk join
-- want: customer_address ca_address_sk join
-- want: customer_address ca_state in
-- want: customer c_customer_sk join
-- want: store_sales ss_customer_sk join
-- want: store_sales ss_sold_date_sk join
-- want: date_dim d_date_sk join
-- want: date_dim d_year =
-- want: date_dim d_moy between
-- want: web_sales ws_bill_customer_sk join
-- want: customer c_birth_year >
SELECT c_last_name, c_first_name
FROM customer, customer_address
WHERE c_current_addr_sk = ca_address_sk
  AND ca_state IN ('CA', 'WA')
  AND EXISTS (SELECT 1 FROM store_sales, date_dim
              WHERE c_customer_sk = ss_customer_sk AND ss_sold_date_sk = d_date_sk
                AND d_year = 2002 AND d_moy BETWEEN 1 AND 4)
  AND NOT EXISTS (SELECT 1 FROM web_sales WHERE ws_bill_customer_sk = c_customer_sk AND c_birth_year > 1960)
LIMIT 100

-- name: ds_promo_subqueries
-- want: store_sales ss_item_sk join
-- want: item i_item_sk join
-- want: store_sales ss_sold_date_sk join
-- want: date_dim d_date_sk join
-- want: store_sales ss_promo_sk join
-- want: promotion p_promo_sk join
-- want: promotion p_channel_email =
-- want: promotion p_channel_tv =
-- want: date_dim d_date between
-- want: store_sales ss_list_price >
-- want: item i_item_sk in
-- want: item i_color in
-- want: store_returns sr_return_amt >
SELECT i_item_id, avg(ss_quantity) agg1
FROM store_sales, item, date_dim, promotion
WHERE ss_item_sk = i_item_sk
  AND ss_sold_date_sk = d_date_sk
  AND ss_promo_sk = p_promo_sk
  AND (p_channel_email = 'N' OR p_channel_tv = 'N')
  AND d_date BETWEEN '2000-02-01'::DATE AND date_add('2000-02-01'::DATE, INTERVAL 60 DAY)
  AND ss_list_price > (SELECT avg(ss_list_price) * 1.2 FROM store_sales)
  AND i_item_sk IN (SELECT i_item_sk FROM item WHERE i_color IN ('red', 'blue'))
GROUP BY i_item_id
HAVING ((SELECT count(*) FROM store_returns WHERE sr_return_amt > 100) > 10)
ORDER BY i_item_id

-- name: ds_self_join_orders
-- want: web_sales ws_order_number join
-- want: date_dim d_date between
-- want: web_sales ws_ship_date_sk join
-- want: date_dim d_date_sk join
-- want: web_sales ws_ship_addr_sk join
-- want: customer_address ca_address_sk join
-- want: web_sales ws_order_number in
-- want: customer_address ca_state !=
WITH ws_wh AS (
  SELECT ws1.ws_order_number, ws1.ws_warehouse_sk wh1, ws2.ws_warehouse_sk wh2
  FROM web_sales ws1, web_sales ws2
  WHERE ws1.ws_order_number = ws2.ws_order_number
    AND ws1.ws_warehouse_sk <> ws2.ws_warehouse_sk)
SELECT count(DISTINCT ws_order_number) AS "order count"
FROM web_sales ws1, date_dim, customer_address
WHERE d_date BETWEEN '1999-02-01' AND CAST('1999-02-01' AS DATE) + INTERVAL 60 DAY
  AND ws1.ws_ship_date_sk = d_date_sk
  AND ws1.ws_ship_addr_sk = ca_address_sk
  AND ws1.ws_order_number IN (SELECT ws_order_number FROM ws_wh)
  AND NOT (ca_state = 'IL')

-- name: ds_am_pm_ratio
-- want: web_sales ws_ship_hdemo_sk join
-- want: household_demographics hd_demo_sk join
-- want: web_sales ws_sold_date_sk join
-- want: date_dim d_date_sk join
-- want: household_demographics hd_dep_count =
-- want: date_dim d_dom between
SELECT cast(amc AS decimal(15, 4)) / cast(pmc AS decimal(15, 4)) am_pm_ratio
FROM (SELECT count(*) amc
      FROM web_sales, household_demographics, date_dim
      WHERE ws_ship_hdemo_sk = hd_demo_sk AND ws_sold_date_sk = d_date_sk
        AND hd_dep_count = 6 AND d_dom BETWEEN 1 AND 15) at,
     (SELECT count(*) pmc
      FROM web_sales, household_demographics, date_dim
      WHERE ws_ship_hdemo_sk = hd_demo_sk AND ws_sold_date_sk = d_date_sk
        AND hd_dep_count = 6 AND d_dom BETWEEN 16 AND 31) pt
ORDER BY am_pm_ratio
LIMIT 100
