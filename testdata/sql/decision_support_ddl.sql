-- Tables of the decision-support corpus (testdata/sql/*/decision_support.sql):
-- a retail star schema in the style of TPC-DS and an order schema in the
-- style of TPC-H, written for floe's tests. Column lists are subsets.

CREATE TABLE date_dim (
  d_date_sk     INTEGER NOT NULL,
  d_date        DATE,
  d_year        INTEGER,
  d_moy         INTEGER,
  d_dom         INTEGER,
  d_qoy         INTEGER,
  d_week_seq    INTEGER,
  d_day_name    CHAR(9),
  PRIMARY KEY (d_date_sk)
);

CREATE TABLE item (
  i_item_sk        INTEGER NOT NULL,
  i_item_id        CHAR(16) NOT NULL,
  i_category       CHAR(50),
  i_class          CHAR(50),
  i_brand          CHAR(50),
  i_brand_id       INTEGER,
  i_manufact_id    INTEGER,
  i_current_price  DECIMAL(7,2),
  i_color          CHAR(20),
  PRIMARY KEY (i_item_sk)
);

CREATE TABLE store (
  s_store_sk    INTEGER NOT NULL,
  s_store_id    CHAR(16),
  s_store_name  VARCHAR(50),
  s_state       CHAR(2),
  s_city        VARCHAR(60),
  s_gmt_offset  DECIMAL(5,2)
);

CREATE TABLE customer (
  c_customer_sk           INTEGER NOT NULL,
  c_customer_id           CHAR(16),
  c_current_addr_sk       INTEGER,
  c_first_name            CHAR(20),
  c_last_name             CHAR(30),
  c_birth_year            INTEGER,
  c_preferred_cust_flag   CHAR(1)
);

CREATE TABLE customer_address (
  ca_address_sk  INTEGER NOT NULL,
  ca_state       CHAR(2),
  ca_city        VARCHAR(60),
  ca_zip         CHAR(10),
  ca_gmt_offset  DECIMAL(5,2)
);

CREATE TABLE household_demographics (
  hd_demo_sk        INTEGER NOT NULL,
  hd_dep_count      INTEGER,
  hd_vehicle_count  INTEGER,
  hd_buy_potential  CHAR(15)
);

CREATE TABLE promotion (
  p_promo_sk       INTEGER NOT NULL,
  p_channel_email  CHAR(1),
  p_channel_tv     CHAR(1)
);

CREATE TABLE store_sales (
  ss_sold_date_sk     INTEGER,
  ss_item_sk          INTEGER NOT NULL,
  ss_customer_sk      INTEGER,
  ss_store_sk         INTEGER,
  ss_promo_sk         INTEGER,
  ss_ticket_number    BIGINT NOT NULL,
  ss_quantity         INTEGER,
  ss_list_price       DECIMAL(7,2),
  ss_ext_sales_price  DECIMAL(7,2),
  ss_net_profit       DECIMAL(7,2)
);

CREATE TABLE store_returns (
  sr_returned_date_sk  INTEGER,
  sr_item_sk           INTEGER NOT NULL,
  sr_customer_sk       INTEGER,
  sr_ticket_number     BIGINT NOT NULL,
  sr_return_amt        DECIMAL(7,2)
);

CREATE TABLE web_sales (
  ws_sold_date_sk      INTEGER,
  ws_ship_date_sk      INTEGER,
  ws_item_sk           INTEGER NOT NULL,
  ws_bill_customer_sk  INTEGER,
  ws_ship_addr_sk      INTEGER,
  ws_ship_hdemo_sk     INTEGER,
  ws_warehouse_sk      INTEGER,
  ws_order_number      BIGINT NOT NULL,
  ws_ext_sales_price   DECIMAL(7,2),
  ws_net_paid          DECIMAL(7,2)
);

CREATE TABLE catalog_sales (
  cs_sold_date_sk      INTEGER,
  cs_item_sk           INTEGER NOT NULL,
  cs_bill_customer_sk  INTEGER,
  cs_order_number      BIGINT NOT NULL,
  cs_warehouse_sk      INTEGER,
  cs_ext_sales_price   DECIMAL(7,2)
);

CREATE TABLE orders (
  o_orderkey       BIGINT NOT NULL,
  o_custkey        BIGINT NOT NULL,
  o_orderstatus    CHAR(1),
  o_orderdate      DATE,
  o_orderpriority  CHAR(15),
  o_totalprice     DECIMAL(15,2)
);

CREATE TABLE lineitem (
  l_orderkey     BIGINT NOT NULL,
  l_suppkey      BIGINT NOT NULL,
  l_shipdate     DATE,
  l_commitdate   DATE,
  l_receiptdate  DATE,
  l_quantity     DECIMAL(15,2),
  l_discount     DECIMAL(15,2),
  l_returnflag   CHAR(1)
);

CREATE TABLE supplier (
  s_suppkey    BIGINT NOT NULL,
  s_name       CHAR(25),
  s_nationkey  BIGINT
);

CREATE TABLE nation (
  n_nationkey  BIGINT NOT NULL,
  n_name       CHAR(25)
);
