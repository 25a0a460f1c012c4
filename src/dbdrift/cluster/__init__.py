"""Run a campaign on a Dask distributed cluster (`dbdrift run --cluster`, `dbdrift worker`).

units.py splits a campaign into units and says what a unit still lacks (no Dask); child.py is
the process that runs one unit on a worker host, the local code path with a store that streams
every fact back; worker.py and client.py are the two ends on Dask, imported only with
--cluster (dbdrift's optional extra cluster).
"""
