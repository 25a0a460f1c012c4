"""The results layer between the store and the reports: reads a stored campaign back for every
workload's report (its context and notes, findings, runs of tests as the analysis takes them,
targets, twins, history), which each workload's slice builds its report model from (sysbench's
ReportData: workloads/sysbench/results/)."""
