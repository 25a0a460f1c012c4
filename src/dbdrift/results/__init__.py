"""The results layer between the store and the report formats: reads a stored campaign, runs the
analysis once, and hands every renderer the same typed `ReportData` (results/data.py)."""
