-- name: q01
select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
  sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, avg(l_discount) as avg_disc, count(*) as count_order
from tpch.sf1.lineitem
where l_shipdate <= date '1998-12-01' - interval '90' day
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus
-- name: q02
select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
from part, supplier, partsupp, nation, region
where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_size = 15 and p_type like '%BRASS'
  and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = 'EUROPE'
  and ps_supplycost = (
    select min(ps_supplycost) from partsupp, supplier, nation, region
    where p_partkey = ps_partkey and s_suppkey = ps_suppkey and s_nationkey = n_nationkey
      and n_regionkey = r_regionkey and r_name = 'EUROPE')
order by s_acctbal desc, n_name, s_name, p_partkey
limit 100
-- name: q03
select l.l_orderkey, sum(l.l_extendedprice * (1 - l.l_discount)) as revenue, o.o_orderdate, o.o_shippriority
from customer c, orders o, lineitem l
where c.c_mktsegment = 'BUILDING' and c.c_custkey = o.o_custkey and l.l_orderkey = o.o_orderkey
  and o.o_orderdate < date '1995-03-15' and l.l_shipdate > date '1995-03-15'
group by l.l_orderkey, o.o_orderdate, o.o_shippriority
order by revenue desc, o.o_orderdate
limit 10
-- name: q04
select o_orderpriority, count(*) as order_count
from orders
where o_orderdate >= date '1993-07-01' and o_orderdate < date '1993-07-01' + interval '3' month
  and exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority
-- name: q05
select n.n_name, sum(l.l_extendedprice * (1 - l.l_discount)) as revenue
from customer c
join orders o on c.c_custkey = o.o_custkey
join lineitem l on l.l_orderkey = o.o_orderkey
join supplier s on l.l_suppkey = s.s_suppkey and c.c_nationkey = s.s_nationkey
join nation n on s.s_nationkey = n.n_nationkey
join region r on n.n_regionkey = r.r_regionkey
where r.r_name = 'ASIA' and o.o_orderdate >= date '1994-01-01' and o.o_orderdate < date '1995-01-01'
group by n.n_name
order by revenue desc
-- name: q06
select sum(l_extendedprice * l_discount) as revenue
from lineitem
where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year
  and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24
-- name: q07
select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
  select n1.n_name as supp_nation, n2.n_name as cust_nation, extract(year from l_shipdate) as l_year,
    l_extendedprice * (1 - l_discount) as volume
  from supplier, lineitem, orders, customer, nation n1, nation n2
  where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
    and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
    and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY') or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
    and l_shipdate between date '1995-01-01' and date '1996-12-31'
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year
-- name: q08
select o_year, sum(case when nation = 'BRAZIL' then volume else 0 end) / sum(volume) as mkt_share
from (
  select extract(year from o.o_orderdate) as o_year, l.l_extendedprice * (1 - l.l_discount) as volume, n2.n_name as nation
  from part p, supplier s, lineitem l, orders o, customer c, nation n1, nation n2, region r
  where p.p_partkey = l.l_partkey and s.s_suppkey = l.l_suppkey and l.l_orderkey = o.o_orderkey
    and o.o_custkey = c.c_custkey and c.c_nationkey = n1.n_nationkey and n1.n_regionkey = r.r_regionkey
    and r.r_name = 'AMERICA' and s.s_nationkey = n2.n_nationkey
    and o.o_orderdate between date '1995-01-01' and date '1996-12-31' and p.p_type = 'ECONOMY ANODIZED STEEL'
) as all_nations
group by o_year
order by o_year
-- name: q09
select nation, o_year, sum(amount) as sum_profit
from (
  select n.n_name as nation, extract(year from o.o_orderdate) as o_year,
    l.l_extendedprice * (1 - l.l_discount) - ps.ps_supplycost * l.l_quantity as amount
  from part p, supplier s, lineitem l, partsupp ps, orders o, nation n
  where s.s_suppkey = l.l_suppkey and ps.ps_suppkey = l.l_suppkey and ps.ps_partkey = l.l_partkey
    and p.p_partkey = l.l_partkey and o.o_orderkey = l.l_orderkey and s.s_nationkey = n.n_nationkey
    and p.p_name like '%green%'
) as profit
group by nation, o_year
order by nation, o_year desc
-- name: q10
select c.c_custkey, c.c_name, sum(l.l_extendedprice * (1 - l.l_discount)) as revenue, c.c_acctbal, n.n_name
from customer c, orders o, lineitem l, nation n
where c.c_custkey = o.o_custkey and l.l_orderkey = o.o_orderkey
  and o.o_orderdate >= date '1993-10-01' and o.o_orderdate < date '1993-10-01' + interval '3' month
  and l.l_returnflag = 'R' and c.c_nationkey = n.n_nationkey
group by c.c_custkey, c.c_name, c.c_acctbal, c.c_phone, n.n_name, c.c_address, c.c_comment
order by revenue desc
limit 20
-- name: q11
select ps.ps_partkey, sum(ps.ps_supplycost * ps.ps_availqty) as value
from partsupp ps, supplier s, nation n
where ps.ps_suppkey = s.s_suppkey and s.s_nationkey = n.n_nationkey and n.n_name = 'GERMANY'
group by ps.ps_partkey
having sum(ps.ps_supplycost * ps.ps_availqty) > (
  select sum(ps2.ps_supplycost * ps2.ps_availqty) * 0.0001
  from partsupp ps2, supplier s2, nation n2
  where ps2.ps_suppkey = s2.s_suppkey and s2.s_nationkey = n2.n_nationkey and n2.n_name = 'GERMANY')
order by value desc
-- name: q12
select l.l_shipmode,
  sum(case when o.o_orderpriority = '1-URGENT' or o.o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count
from orders o, lineitem l
where o.o_orderkey = l.l_orderkey and l.l_shipmode in ('MAIL', 'SHIP')
  and l.l_commitdate < l.l_receiptdate and l.l_shipdate < l.l_commitdate
  and l.l_receiptdate >= date '1994-01-01' and l.l_receiptdate < date '1995-01-01'
group by l.l_shipmode
order by l.l_shipmode
-- name: q13
select c_count, count(*) as custdist
from (
  select c.c_custkey, count(o.o_orderkey) as c_count
  from customer c left outer join orders o on c.c_custkey = o.o_custkey and o.o_comment not like '%special%requests%'
  group by c.c_custkey
) as c_orders (c_custkey, c_count)
group by c_count
order by custdist desc, c_count desc
-- name: q14
select 100.00 * sum(case when p.p_type like 'PROMO%' then l.l_extendedprice * (1 - l.l_discount) else 0 end)
  / sum(l.l_extendedprice * (1 - l.l_discount)) as promo_revenue
from lineitem l, part p
where l.l_partkey = p.p_partkey and l.l_shipdate >= date '1995-09-01' and l.l_shipdate < date '1995-10-01'
-- name: q15
with revenue0 as (
  select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue
  from lineitem
  where l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-04-01'
  group by l_suppkey
)
select s.s_suppkey, s.s_name, s.s_address, s.s_phone, r.total_revenue
from supplier s, revenue0 r
where s.s_suppkey = r.supplier_no and r.total_revenue = (select max(total_revenue) from revenue0)
order by s.s_suppkey
-- name: q16
select p.p_brand, p.p_type, p.p_size, count(distinct ps.ps_suppkey) as supplier_cnt
from partsupp ps, part p
where p.p_partkey = ps.ps_partkey and p.p_brand <> 'Brand#45' and p.p_type not like 'MEDIUM POLISHED%'
  and p.p_size in (49, 14, 23, 45, 19, 3, 36, 9)
  and ps.ps_suppkey not in (select s_suppkey from supplier where s_comment like '%Customer%Complaints%')
group by p.p_brand, p.p_type, p.p_size
order by supplier_cnt desc, p.p_brand, p.p_type, p.p_size
-- name: q17
select sum(l.l_extendedprice) / 7.0 as avg_yearly
from lineitem l, part p
where p.p_partkey = l.l_partkey and p.p_brand = 'Brand#23' and p.p_container = 'MED BOX'
  and l.l_quantity < (select 0.2 * avg(l2.l_quantity) from lineitem l2 where l2.l_partkey = p.p_partkey)
-- name: q18
select c.c_name, c.c_custkey, o.o_orderkey, o.o_orderdate, o.o_totalprice, sum(l.l_quantity)
from customer c, orders o, lineitem l
where o.o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300)
  and c.c_custkey = o.o_custkey and o.o_orderkey = l.l_orderkey
group by c.c_name, c.c_custkey, o.o_orderkey, o.o_orderdate, o.o_totalprice
order by o.o_totalprice desc, o.o_orderdate
limit 100
-- name: q19
select sum(l.l_extendedprice * (1 - l.l_discount)) as revenue
from lineitem l, part p
where (p.p_partkey = l.l_partkey and p.p_brand = 'Brand#12' and p.p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
    and l.l_quantity >= 1 and l.l_quantity <= 1 + 10 and p.p_size between 1 and 5
    and l.l_shipmode in ('AIR', 'AIR REG') and l.l_shipinstruct = 'DELIVER IN PERSON')
  or (p.p_partkey = l.l_partkey and p.p_brand = 'Brand#23' and p.p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
    and l.l_quantity >= 10 and l.l_quantity <= 10 + 10 and p.p_size between 1 and 10
    and l.l_shipmode in ('AIR', 'AIR REG') and l.l_shipinstruct = 'DELIVER IN PERSON')
  or (p.p_partkey = l.l_partkey and p.p_brand = 'Brand#34' and p.p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
    and l.l_quantity >= 20 and l.l_quantity <= 20 + 10 and p.p_size between 1 and 15
    and l.l_shipmode in ('AIR', 'AIR REG') and l.l_shipinstruct = 'DELIVER IN PERSON')
-- name: q20
select s.s_name, s.s_address
from supplier s, nation n
where s.s_suppkey in (
    select ps.ps_suppkey from partsupp ps
    where ps.ps_partkey in (select p_partkey from part where p_name like 'forest%')
      and ps.ps_availqty > (
        select 0.5 * sum(l.l_quantity) from lineitem l
        where l.l_partkey = ps.ps_partkey and l.l_suppkey = ps.ps_suppkey
          and l.l_shipdate >= date '1994-01-01' and l.l_shipdate < date '1995-01-01'))
  and s.s_nationkey = n.n_nationkey and n.n_name = 'CANADA'
order by s.s_name
-- name: q21
select s.s_name, count(*) as numwait
from supplier s, lineitem l1, orders o, nation n
where s.s_suppkey = l1.l_suppkey and o.o_orderkey = l1.l_orderkey and o.o_orderstatus = 'F'
  and l1.l_receiptdate > l1.l_commitdate
  and exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
  and not exists (select * from lineitem l3 where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
    and l3.l_receiptdate > l3.l_commitdate)
  and s.s_nationkey = n.n_nationkey and n.n_name = 'SAUDI ARABIA'
group by s.s_name
order by numwait desc, s.s_name
limit 100
-- name: q22
select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
from (
  select substring(c_phone, 1, 2) as cntrycode, c_acctbal
  from customer
  where substring(c_phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17')
    and c_acctbal > (select avg(c_acctbal) from customer
      where c_acctbal > 0.00 and substring(c_phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17'))
    and not exists (select * from orders where o_custkey = c_custkey)
) as custsale
group by cntrycode
order by cntrycode
