import json, os, subprocess, gzip
OUT="/work/main/testdata/logs/spark"
SQLP="org.apache.spark.sql.execution.ui."
def dump(o): return json.dumps(o, separators=(",",":"))
def metric(name, acc, typ="sum"): return {"name":name,"accumulatorId":acc,"metricType":typ}
def batchscan(table, cols, filters, accbase):
    return {"nodeName":"BatchScan "+table,
            "simpleString":"BatchScan %s[%s] %s (branch=null) [filters=%s, groupedBy=] RuntimeFilters: []" % (table, ", ".join(cols), table, filters),
            "children":[],"metadata":{},
            "metrics":[metric("number of output rows",accbase),
                       metric("number of result data files",accbase+3,"v2Custom_org.apache.iceberg.spark.source.metrics.ResultDataFiles"),
                       metric("number of skipped data files",accbase+4,"v2Custom_org.apache.iceberg.spark.source.metrics.SkippedDataFiles"),
                       metric("number of scanned data manifests",accbase+5,"v2Custom_org.apache.iceberg.spark.source.metrics.ScannedDataManifests"),
                       metric("number of skipped data manifests",accbase+6,"v2Custom_org.apache.iceberg.spark.source.metrics.SkippedDataManifests")]}
def wrap(*children, name="WholeStageCodegen (1)"):
    return {"nodeName":name,"simpleString":name,"children":list(children),"metadata":{},"metrics":[]}
def node(name, simple, *children): return {"nodeName":name,"simpleString":simple,"children":list(children),"metadata":{},"metrics":[]}

def app(appid, user, t0, version="3.5.3"):
    return [
      {"Event":"SparkListenerLogStart","Spark Version":version},
      {"Event":"SparkListenerResourceProfileAdded","Resource Profile Id":0,"Executor Resource Requests":{},"Task Resource Requests":{}},
      {"Event":"SparkListenerApplicationStart","App Name":"daily-report","App ID":appid,"Timestamp":t0,"User":user},
    ]

def exec_start(eid, t, desc, plan, physical="", root=None, sqltext=None):
    e={"Event":SQLP+"SparkListenerSQLExecutionStart","executionId":eid,"rootExecutionId":eid if root is None else root,
       "description":desc,"details":"org.apache.spark.sql.SparkSession.sql(SparkSession.scala:638)\nsun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)",
       "physicalPlanDescription":physical,"sparkPlanInfo":plan,"time":t,"modifiedConfigs":{},"jobTags":[]}
    if sqltext is not None: e["sqlText"]=sqltext
    return e
def exec_end(eid, t, err=None):
    e={"Event":SQLP+"SparkListenerSQLExecutionEnd","executionId":eid,"time":t}
    if err is not None: e["errorMessage"]=err
    return e
def aqe(eid, plan, physical=""):
    return {"Event":SQLP+"SparkListenerSQLAdaptiveExecutionUpdate","executionId":eid,"physicalPlanDescription":physical,"sparkPlanInfo":plan}
def accum(eid, ups): return {"Event":SQLP+"SparkListenerDriverAccumUpdates","executionId":eid,"accumUpdates":ups}
def job(jid, eid, stages, t):
    return {"Event":"SparkListenerJobStart","Job ID":jid,"Submission Time":t,"Stage Infos":[],"Stage IDs":stages,"Properties":{"spark.sql.execution.id":str(eid),"spark.job.description":"x"}}
def jobend(jid, t, failed=None):
    r={"Result":"JobSucceeded"} if failed is None else {"Result":"JobFailed","Exception":{"Message":failed,"Stack Trace":[]}}
    return {"Event":"SparkListenerJobEnd","Job ID":jid,"Completion Time":t,"Job Result":r}
def task(stage, tid, bytes_, recs, cpu):
    return {"Event":"SparkListenerTaskEnd","Stage ID":stage,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},
            "Task Info":{"Task ID":tid,"Index":tid,"Attempt":0,"Launch Time":1,"Executor ID":"1","Host":"10.0.0.7","Locality":"PROCESS_LOCAL","Speculative":False,"Getting Result Time":0,"Finish Time":2,"Failed":False,"Killed":False,"Accumulables":[]},
            "Task Metrics":{"Executor Deserialize Time":5,"Executor Run Time":90,"Executor CPU Time":cpu,"Result Size":2000,"JVM GC Time":0,
                            "Input Metrics":{"Bytes Read":bytes_,"Records Read":recs},"Output Metrics":{"Bytes Written":0,"Records Written":0},
                            "Shuffle Read Metrics":{},"Shuffle Write Metrics":{},"Updated Blocks":[]}}

# --- the reference example, execution 7
ref_plan = wrap(node("Project","Project [order_id#12L, amount#13]",
    node("Filter","Filter ((isnotnull(order_date#14) AND isnotnull(customer_id#15L)) AND ((order_date#14 >= 2024-04-01) AND (customer_id#15L = 42)))",
       batchscan("demo.db.orders",["order_id#12L","amount#13","order_date#14","customer_id#15L"],"order_date IS NOT NULL, customer_id IS NOT NULL, order_date >= 19814, customer_id = 42",101))))
ref_physical = "== Physical Plan ==\n* Project (3)\n+- * Filter (2)\n   +- BatchScan demo.db.orders (1)\n\n\n(1) BatchScan demo.db.orders\nOutput [4]: [order_id#12L, amount#13, order_date#14, customer_id#15L]\ndemo.db.orders (branch=null) [filters=order_date IS NOT NULL, customer_id IS NOT NULL, order_date >= 19814, customer_id = 42, groupedBy=]\nRuntimeFilters: []\n"
ev = app("application_1714560000000_0042","alice",1714567800000)
ev += [exec_start(7,1714567890123,"SELECT order_id, amount FROM demo.db.orders WHERE order_date >= DATE'2024-04-01' AND customer_id = 42",ref_plan,ref_physical),
       job(3,7,[5],1714567890200), task(5,40,52428800,800000,310000000), task(5,41,20971520,450000,150000000), jobend(3,1714567893400),
       accum(7,[[104,3],[105,41],[106,2],[107,10]]),
       exec_end(7,1714567893512)]
# --- execution 8: Thrift SQL with OR / IN / NOT / LIKE / timestamp micros / comma in string; AQE replans twice
f8 = "event_ts IS NOT NULL, event_ts >= 1714521600000000, (region = 'eu' OR region IN ('us-east', 'a,b')), NOT (status = 'deleted'), name LIKE 'acme%', day(event_ts) = 19844, bucket[16](user_id) = 3"
plan8 = wrap(node("HashAggregate","HashAggregate(keys=[region#3], functions=[count(1)])",
    batchscan("glue_catalog.web.events",["region#3","event_ts#4","status#5","name#6","user_id#7L"],f8,201)))
aqe_plan8 = node("AdaptiveSparkPlan","AdaptiveSparkPlan isFinalPlan=true",
    node("HashAggregate","HashAggregate(keys=[region#3], functions=[count(1)])",
      node("ShuffleQueryStage","ShuffleQueryStage 0", batchscan("glue_catalog.web.events",["region#3","event_ts#4"],f8,301))))
ev += [exec_start(8,1714568000000,"SELECT region, count(*) FROM glue_catalog.web.events WHERE event_ts >= TIMESTAMP '2024-05-01 00:00:00' AND (region = 'eu' OR region IN ('us-east','a,b')) AND NOT status = 'deleted' AND name LIKE 'acme%' GROUP BY region",plan8),
       aqe(8, aqe_plan8), aqe(8, aqe_plan8), job(4,8,[6,7],1714568000100), task(6,50,1000,10,1000000), jobend(4,1714568001000),
       accum(8,[[304,12],[305,88]]),
       exec_end(8,1714568002000)]
# --- execution 9: DataFrame self-join job (call-site description), two scans of one table + another table, failed
plan9 = wrap(node("SortMergeJoin","SortMergeJoin [customer_id#15L], [id#30L], Inner",
    batchscan("demo.db.orders",["customer_id#15L","amount#13"],"amount > 100.5",401),
    batchscan("demo.db.orders",["customer_id#15L"],"customer_id IN (1, 2, 3)",411),
    batchscan("demo.db.customers",["id#30L","tier#31"],"",421)))
ev += [exec_start(9,1714568100000,"collect at Job.scala:42",plan9),
       job(5,9,[8],1714568100100), jobend(5,1714568105000,failed="org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 8.0 failed 4 times\n  at org.apache..."),
       exec_end(9,1714568105100,err="")]
# --- execution 10: CTAS with a nested execution 11 (no scans, skipped) and 12 (nested with a scan)
plan10 = node("AtomicCreateTableAsSelect","AtomicCreateTableAsSelect demo.db.big_orders, IcebergWrite(table=demo.db.big_orders, format=PARQUET)",
    batchscan("demo.db.orders",["order_id#12L","amount#13"],"amount >= 1000",501))
ev += [exec_start(10,1714568200000,"CREATE TABLE demo.db.big_orders USING iceberg AS SELECT order_id, amount FROM demo.db.orders WHERE amount >= 1000",plan10),
       exec_start(11,1714568200100,"CREATE TABLE demo.db.big_orders USING iceberg AS SELECT order_id, amount FROM demo.db.orders WHERE amount >= 1000",node("LocalTableScan","LocalTableScan <empty>"),root=10),
       exec_end(11,1714568200200),
       exec_start(12,1714568200300,"",wrap(batchscan("demo.db.orders",["order_id#12L"],"order_id IS NOT NULL",601)),root=10),
       exec_end(12,1714568200400),
       exec_end(10,1714568203000)]
ev += [{"Event":"SparkListenerApplicationEnd","Timestamp":1714568300000}]
with open(os.path.join(OUT,"application_1714560000000_0042"),"w") as fh:
    for e in ev: fh.write(dump(e)+"\n")

# --- rolling, zstd-compressed, in-progress log (Spark 4 defaults): parts 1, 2, 10
appid="app-20240502093000-0007"
d=os.path.join(OUT,"eventlog_v2_"+appid)
os.makedirs(d, exist_ok=True)
for f in os.listdir(d): os.remove(os.path.join(d,f))
open(os.path.join(d,"appstatus_"+appid+".inprogress"),"w").close()
p1 = app(appid,"bob",1714642200000,version="4.0.1")
p1 += [exec_start(0,1714642210000,None or "",None,"",sqltext="SELECT * FROM lake.sales.orders WHERE order_date = DATE '2024-05-01'")]
p1[-1]["sparkPlanInfo"]=wrap(batchscan("lake.sales.orders",["order_id#1L","order_date#2"],"order_date IS NOT NULL, order_date = 19844",11))
p2 = [aqe(0, wrap(batchscan("lake.sales.orders",["order_id#1L","order_date#2"],"order_date IS NOT NULL, order_date = 19844",21))), exec_end(0,1714642212000)]
p10 = [exec_start(1,1714642300000,"SELECT count(*) FROM lake.sales.orders WHERE region = 'emea'",wrap(batchscan("lake.sales.orders",["region#3"],"region IS NOT NULL, region = 'emea'",31))),
       exec_end(1,1714642301000),
       exec_start(2,1714642400000,"SELECT max(amount) FROM lake.sales.orders",wrap(batchscan("lake.sales.orders",["amount#4"],"",41)))]
for n, part in [(1,p1),(2,p2),(10,p10)]:
    raw = os.path.join(d,"events_%d_%s" % (n, appid))
    with open(raw,"w") as fh:
        for e in part: fh.write(dump(e)+"\n")
        if n == 10:
            fh.write(dump(exec_end(2,1714642401000))[:37])  # cut mid-line: the writer is still running
    subprocess.run(["zstd","-q","-f","--rm","-o",raw+".zstd",raw],check=True)

# --- single-file in-progress log with a cut last line (plain)
appid2="local-1714650000000"
ev2 = app(appid2,"carol",1714650000000)
ev2 += [exec_start(0,1714650001000,"SELECT * FROM demo.db.orders WHERE customer_id = 7",wrap(batchscan("demo.db.orders",["customer_id#1L"],"customer_id IS NOT NULL, customer_id = 7",1))),
        exec_end(0,1714650002000)]
with open(os.path.join(OUT,appid2+".inprogress"),"w") as fh:
    for e in ev2: fh.write(dump(e)+"\n")
    fh.write(dump(exec_start(1,1714650003000,"SELECT 1",None))[:50])

# --- Databricks-style gzip log with a malformed line (bad record)
appid3="app-20240503120000-0001"
ev3 = app(appid3,"dan",1714737600000)
ev3 += [exec_start(0,1714737601000,"SELECT * FROM spark_catalog.db.t WHERE NOT (x = 1) AND y IS NULL",wrap(batchscan("spark_catalog.db.t",["x#1","y#2"],"NOT (x = 1), y IS NULL",1))),
        exec_end(0,1714737602000)]
lines=[dump(e) for e in ev3]
lines.insert(3,'{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart","executionId":')
with gzip.open(os.path.join(OUT,"eventlog-2024-05-03--12-00.gz"),"wt") as fh:
    fh.write("\n".join(lines)+"\n")
